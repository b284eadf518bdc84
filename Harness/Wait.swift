public import Prometheus

/// A condition that did not hold within its time limit: the test fails with what it waited for.
public struct WaitTimeout: Error, CustomStringConvertible {
    /// What was waited for, as the test names it.
    public let what: String
    /// How long it was waited for.
    public let timeout: Duration

    public var description: String { "timed out after \(self.timeout) waiting for \(self.what)" }
}

/// Waiting on a condition, never on a fixed delay: the condition is checked until it holds, and a
/// wait that reaches its time limit throws ``WaitTimeout`` rather than returning as if it held.
public enum Wait {
    /// How long to pause between checks of a condition.
    public static let pollInterval = Duration.milliseconds(20)

    /// Returns once `condition` holds; throws ``WaitTimeout`` after `timeout`.
    public static func until(
        _ what: String, timeout: Duration = .seconds(30), _ condition: () async throws -> Bool
    ) async throws {
        _ = try await Self.for(what, timeout: timeout, condition) { $0 }
    }

    /// Returns `value()` once `accept` holds for it; throws ``WaitTimeout`` after `timeout`.
    public static func `for`<Value>(
        _ what: String, timeout: Duration = .seconds(30), _ value: () async throws -> Value,
        where accept: (Value) -> Bool
    ) async throws -> Value {
        let deadline = ContinuousClock.now + timeout
        var current = try await value()
        while !accept(current) {
            guard ContinuousClock.now < deadline else { throw WaitTimeout(what: what, timeout: timeout) }
            try await Task.sleep(for: Self.pollInterval)
            current = try await value()
        }
        return current
    }
}

/// The samples of a Prometheus text exposition, by name with labels as written
/// (`focusgate_dlq_total{error="wrong-type"}`); comments and malformed lines are skipped.
public func prometheusSamples(_ exposition: String) -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
            continue
        }
        samples[String(line[..<space])] = value
    }
    return samples
}

extension PrometheusCollectorRegistry {
    /// Every sample the registry exposes now, as ``prometheusSamples(_:)`` reads them.
    public var samples: [String: Double] {
        var buffer: [UInt8] = []
        self.emit(into: &buffer)
        return prometheusSamples(String(decoding: buffer, as: UTF8.self))
    }
}
