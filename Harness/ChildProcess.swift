import Foundation
import Subprocess
import Synchronization
import SystemPackage

/// Child processes for the tests, benchmarks and soak run, through swift-subprocess: spawned
/// with only standard input, output and error inherited, reaped by the library.
public enum ChildProcess {
    /// How a process that ran to completion ended, and what it wrote.
    public struct Result: Sendable {
        /// The exit status, or the number of the signal that ended it.
        public var status: Int32
        /// Whether a signal ended it.
        public var bySignal: Bool
        public var output: String
        public var error: String
    }

    /// Runs `executable` (a path, or a name looked up in `PATH`) to completion.
    ///
    /// - Parameters:
    ///   - environment: Variables added to (or replacing) the current environment.
    ///   - input: Bytes written to its standard input, which is then closed.
    ///   - workingDirectory: Where it runs; the current directory when `nil`.
    /// - Throws: When it cannot be started, or writes more than 64 MiB.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], input: [UInt8] = [],
        workingDirectory: String? = nil
    ) async throws -> Result {
        let result = try await Subprocess.run(
            Self.executable(executable), arguments: Arguments(arguments),
            environment: Self.environment(environment), workingDirectory: workingDirectory.map { FilePath($0) },
            input: .array(input), output: .string(limit: 64 << 20), error: .string(limit: 64 << 20))
        let (status, bySignal) = Self.status(result.terminationStatus)
        return Result(
            status: status, bySignal: bySignal, output: result.standardOutput, error: result.standardError)
    }

    static func executable(_ name: String) -> Executable {
        name.contains("/") ? .path(FilePath(name)) : .name(name)
    }

    /// The current environment with `variables` added, less the test and fuzz settings of this
    /// process (`FOCUSGATE_TEST_*`, `FOCUSGATE_FUZZ_*`): `focusgate serve` refuses a `FOCUSGATE_*`
    /// variable it does not know.
    static func environment(_ variables: [String: String]) -> Environment {
        var updates: [Environment.Key: String?] = [:]
        for name in ProcessInfo.processInfo.environment.keys
        where name.hasPrefix("FOCUSGATE_TEST_") || name.hasPrefix("FOCUSGATE_FUZZ_") {
            if let key = Environment.Key(rawValue: name) { updates[key] = String?.none }
        }
        for (name, value) in variables {
            if let key = Environment.Key(rawValue: name) { updates[key] = value }
        }
        return .inherit.updating(updates)
    }

    static func status(_ status: TerminationStatus) -> (Int32, bySignal: Bool) {
        switch status {
        case .exited(let code): (code, false)
        case .signaled(let signal): (signal, true)
        }
    }
}

/// A child process that runs until it exits or is stopped: its standard output is collected, its
/// standard error goes to a file; ``stop(_:)`` signals it and returns how it ended.
public final class RunningProcess: Sendable {
    private struct State {
        var processIdentifier: Int32 = 0
        var output = ""
        var ended: (status: Int32, bySignal: Bool)?
    }

    /// Shared with the task that runs the process.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()
    private let signals: AsyncStream<Int32>.Continuation
    private let running: Task<Void, any Error>

    /// Starts `executable` with `arguments`; returns once it runs.
    ///
    /// - Parameters:
    ///   - environment: Variables added to (or replacing) the current environment.
    ///   - errorPath: The file its standard error is appended to (created if absent).
    /// - Throws: When it cannot be started.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], errorPath: String
    ) async throws {
        let errorFile = try FileDescriptor.open(
            FilePath(errorPath), .writeOnly, options: [.create, .append], permissions: [.ownerReadWrite, .groupRead])
        let (signals, signalling) = AsyncStream<Int32>.makeStream()
        let (started, starting) = AsyncThrowingStream<Void, any Error>.makeStream()
        self.signals = signalling
        let shared = self.shared
        self.running = Task {
            do {
                let result = try await Subprocess.run(
                    ChildProcess.executable(executable), arguments: Arguments(arguments),
                    environment: ChildProcess.environment(environment), input: .none, output: .sequence,
                    error: .fileDescriptor(errorFile, closeAfterSpawningProcess: true)
                ) { execution in
                    shared.state.withLock { $0.processIdentifier = execution.processIdentifier.value }
                    starting.yield()
                    starting.finish()
                    // Until its standard output ends (it exited), pass on the signals asked for.
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await signal in signals { try? execution.send(signal: Signal(rawValue: signal)) }
                        }
                        do {
                            for try await chunk in execution.standardOutput {
                                let text = chunk.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                                shared.state.withLock { $0.output += text }
                            }
                        } catch {}
                        group.cancelAll()
                    }
                }
                shared.state.withLock { $0.ended = ChildProcess.status(result.terminationStatus) }
            } catch {
                starting.finish(throwing: error)
                throw error
            }
        }
        for try await _ in started {}
    }

    deinit {
        if self.isRunning { kill(self.processIdentifier, SIGKILL) }
        self.signals.finish()
    }

    /// The process id.
    public var processIdentifier: Int32 { self.shared.state.withLock { $0.processIdentifier } }

    /// Whether it has not yet been seen to end.
    public var isRunning: Bool { self.shared.state.withLock { $0.ended == nil } }

    /// What it wrote to standard output so far.
    public var standardOutput: String { self.shared.state.withLock { $0.output } }

    /// Sends `signal` (SIGTERM, SIGKILL…) and waits until the process ends.
    ///
    /// - Returns: The exit status, or the signal's number when a signal ended it.
    public func stop(_ signal: Int32) async -> (status: Int32, bySignal: Bool) {
        self.signals.yield(signal)
        return await self.exit()
    }

    /// Waits until the process ends by itself.
    ///
    /// - Returns: The exit status, or the signal's number when a signal ended it.
    public func exit() async -> (status: Int32, bySignal: Bool) {
        _ = await self.running.result
        return self.shared.state.withLock { $0.ended } ?? (-1, false)
    }
}
