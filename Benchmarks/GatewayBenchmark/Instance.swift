import FocusGate
import FocusGateKafka
import FocusGateHarness
import Foundation

// MARK: - The gateway: `focusgate serve` processes

/// One `focusgate serve` process (the release binary next to this one) against the benchmark's
/// broker and store, on its own group, input and state topics.
final class Instance {
    let serve: ServeProcess

    /// Starts `executable` (by default `BENCH_SERVE`, else the `focusgate` next to the benchmark)
    /// with `environment`; returns once it is ready unless `waitingUntilReady` is false.
    init(
        _ environment: [String: String], executable: URL = servedExecutable, waitingUntilReady: Bool = true
    ) async throws {
        self.serve = try await ServeProcess(
            executable: executable, bootstrapServers: broker.bootstrapServers, databasePath: path,
            logLevel: ProcessInfo.processInfo.environment["BENCH_TRACE"] != nil ? "debug" : "error",
            environment: environment, logPath: "/dev/stderr")
        guard waitingUntilReady else { return }
        // Restoring the history takes seconds; under valgrind (BENCH_SERVE) minutes.
        guard try await self.serve.waitUntilReady(timeout: .seconds(600)) else {
            fatalError("focusgate serve did not become ready")
        }
    }

    /// The sum of a metric's samples.
    func metric(_ name: String) async -> Double {
        await self.serve.metrics().filter { $0.key == name || $0.key.hasPrefix(name + "{") }.values.reduce(0, +)
    }

    var consumed: Int { get async { Int(await self.metric("focusgate_events_consumed_total")) } }

    /// CPU time of the `serve` process so far (user + system, all threads), in seconds.
    var cpuSeconds: Double {
        Self.cpu(statFile: "/proc/\(self.serve.processIdentifier)/stat")?.seconds ?? 0
    }

    /// CPU time of `serve`'s worker threads so far (named `fg-worker-N`), in seconds: the batch
    /// loops, apart from librdkafka's threads and the rest. 0 when no thread carries that name.
    var workerCPUSeconds: Double {
        let tasks = "/proc/\(self.serve.processIdentifier)/task"
        return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [])
            .compactMap { Self.cpu(statFile: "\(tasks)/\($0)/stat") }
            .filter { $0.name.hasPrefix(Gateway.workerThreadPrefix) }
            .reduce(0) { $0 + $1.seconds }
    }

    /// A process's or thread's name and CPU time (user + system, in seconds) from its `stat` file.
    private static func cpu(statFile path: String) -> (name: Substring, seconds: Double)? {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (stat[stat.index(after: open)..<close], (user + system) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// The figures per record are differences of these between the start and end of a measurement.
    struct Reading {
        var consumed: Double
        var cpuSeconds: Double
        var workerCPUSeconds: Double
        var allocations: Double
        var changelogBytes: Double
        /// Records produced: outputs, DLQ, badge updates, state records.
        var produced: Double
    }

    func reading() async -> Reading {
        Reading(
            consumed: await self.metric("focusgate_events_consumed_total"), cpuSeconds: self.cpuSeconds,
            workerCPUSeconds: self.workerCPUSeconds,
            allocations: await self.metric("focusgate_worker_allocations_total"),
            changelogBytes: await self.metric("focusgate_state_bytes_total"), produced: await self.produced)
    }

    /// Records consumed so far, and when that was read.
    func progress() async -> (consumed: Int, at: ContinuousClock.Instant) {
        let consumed = await self.consumed
        return (consumed, ContinuousClock.now)
    }

    /// Records the instance produced: outputs, DLQ, badge updates, state records.
    var produced: Double {
        get async {
            var produced = 0.0
            for name in [
                "focusgate_decisions_total", "focusgate_dlq_total", "focusgate_badge_updates_total",
                "focusgate_state_records_total",
            ] {
                produced += await self.metric(name)
            }
            return produced
        }
    }

    /// Records the instance produced per record consumed.
    var producedPerConsumed: Double {
        get async { await self.produced / max(1, await self.metric("focusgate_events_consumed_total")) }
    }

    func stop() async {
        let status = await self.serve.stop(SIGTERM)
        precondition(status == 0, "focusgate serve exited with \(status)")
    }
}

/// The `focusgate` binary measured: `BENCH_SERVE` (another build, or a script that runs one under
/// a profiler: `exec valgrind … focusgate "$@"`), else the one next to the benchmark.
let servedExecutable =
    ProcessInfo.processInfo.environment["BENCH_SERVE"].map { URL(fileURLWithPath: $0) }
    ?? ServeProcess.siblingExecutable

/// What an instance is told through `FOCUSGATE_*` variables: its input, a state topic of its own
/// (`state`, already written, or a new one holding `history`), its group, delivery mode and
/// workers, and the Kafka settings the raw pass-through uses too.
func settings(
    _ mode: GatewayConfiguration.DeliveryMode, input: String, group: String? = nil, workers: Int = 1,
    history: [[(key: [UInt8], value: [UInt8]?)]]? = nil, state written: String? = nil
) throws -> [String: String] {
    let run = nextRun()
    var state = "bench-state-\(run)"
    if let written {
        state = written
    } else {
        try broker.createTopic(.compacted(state, partitions: partitions))
        try preloadHistory(topic: state, records: history ?? historyRecords)
    }
    var environment = [
        "FOCUSGATE_TOPICS_NOTIFICATIONS": input,
        "FOCUSGATE_TOPICS_STATE": state,
        "FOCUSGATE_KAFKA_GROUPID": group ?? "gateway-\(run)",
        "FOCUSGATE_DELIVERY_MODE": mode.description,
        "FOCUSGATE_DELIVERY_COMMITGROUPOFFSETS": "true",
        "FOCUSGATE_COMMIT_INTERVALMS": String(
            commitInterval.components.seconds * 1000 + commitInterval.components.attoseconds / 1_000_000_000_000_000),
        "FOCUSGATE_WORKERS": String(workers),
        "FOCUSGATE_KAFKA_PROPERTIES_SESSION_TIMEOUT_MS": "6000",
    ]
    // The heap-allocation counter, built next to the benchmark (`swift build -c release`).
    let counter = ServeProcess.siblingExecutable.deletingLastPathComponent().appendingPathComponent(
        "libMallocCounter.so"
    ).path
    if FileManager.default.fileExists(atPath: counter) { environment["LD_PRELOAD"] = counter }
    for (key, value) in kafkaProperties {
        environment["FOCUSGATE_KAFKA_PROPERTIES_" + key.uppercased().replacingOccurrences(of: ".", with: "_")] = value
    }
    return environment
}
