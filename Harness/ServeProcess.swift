public import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `focusgate serve` as a child process against a given broker and SQLite file, for the
/// integration tests, the end-to-end benchmark and the soak run.
public final class ServeProcess: Sendable {
    public let adminPort: UInt16
    /// The process's log: a file, never a pipe, so that a chatty process never blocks.
    public let logPath: String
    /// Whether ``logPath`` is the process's own temporary file, removed with it.
    private let ownsLog: Bool
    private let child: RunningProcess

    /// Starts `executable serve` with `FOCUSGATE_*` settings in `environment` (on top of the
    /// broker, store path and admin port); returns once it runs.
    ///
    /// - Parameters:
    ///   - executable: The `focusgate` binary.
    ///   - bootstrapServers: The broker to use.
    ///   - databasePath: The SQLite store file.
    ///   - logLevel: `--log-level`.
    ///   - environment: More environment variables; they win over the defaults.
    ///   - logPath: Where the process's log goes; `nil`: a temporary file, read with ``standardError``.
    ///   - adminPort: The admin API's port; `nil`: a free one.
    /// - Throws: When the process cannot be started.
    public init(
        executable: URL, bootstrapServers: String, databasePath: String, logLevel: String = "warning",
        environment: [String: String] = [:], logPath: String? = nil, adminPort: UInt16? = nil
    ) async throws {
        self.adminPort = adminPort ?? freeLoopbackPort()
        self.ownsLog = logPath == nil
        self.logPath = logPath ?? ScratchDirectory.process.file("serve", extension: "log")
        self.child = try await RunningProcess(
            executable.path, ["serve", "--log-level", logLevel],
            environment: [
                "FOCUSGATE_KAFKA_BOOTSTRAPSERVERS": bootstrapServers,
                "FOCUSGATE_STORE_SQLITE_PATH": databasePath,
                "FOCUSGATE_ADMIN_PORT": "\(self.adminPort)",
            ].merging(environment) { $1 },
            errorPath: self.logPath)
    }

    deinit {
        if self.ownsLog { try? FileManager.default.removeItem(atPath: self.logPath) }
    }

    /// The process id.
    public var processIdentifier: Int32 { self.child.processIdentifier }

    /// Whether it has not yet been seen to end.
    public var isRunning: Bool { self.child.isRunning }

    /// The `focusgate` binary next to the running executable (test bundle runner or benchmark).
    public static var siblingExecutable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("focusgate")
    }

    /// Waits for `/readyz` to answer 200.
    public func waitUntilReady(timeout: Duration = .seconds(30)) async throws -> Bool {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(self.adminPort)/readyz")!)
        request.timeoutInterval = 1
        var ready = false
        try? await Wait.until("/readyz answering 200", timeout: timeout) {
            guard self.isRunning else { return true }  // it will never answer
            let answer = try? await URLSession.shared.data(for: request)
            ready = (answer?.1 as? HTTPURLResponse)?.statusCode == 200
            return ready
        }
        return ready
    }

    /// Every sample of `/metrics`, by name with labels (empty when unreachable).
    public func metrics() async -> [String: Double] {
        guard
            let (data, _) = try? await URLSession.shared.data(
                from: URL(string: "http://127.0.0.1:\(self.adminPort)/metrics")!)
        else { return [:] }
        return prometheusSamples(String(decoding: data, as: UTF8.self))
    }

    /// A sample of `/metrics` (0 when absent or unreachable).
    public func metric(_ sample: String) async -> Double {
        await self.metrics()[sample] ?? 0
    }

    /// Waits until the `/metrics` sample reaches `value`; `false` when `timeout` passed first.
    public func waitForMetric(_ sample: String, atLeast value: Double, timeout: Duration = .seconds(60)) async throws
        -> Bool
    {
        do {
            try await Wait.until("\(sample) ≥ \(value)", timeout: timeout) { await self.metric(sample) >= value }
            return true
        } catch is WaitTimeout {
            return false
        }
    }

    /// Waits until `/metrics` shows at least `count` consumed records; throws ``WaitTimeout`` when
    /// it does not within `timeout`.
    public func waitForConsumed(_ count: Double, timeout: Duration = .seconds(60)) async throws {
        try await Wait.until("\(Int(count)) records consumed", timeout: timeout) {
            await self.metric("focusgate_events_consumed_total") >= count
        }
    }

    /// Waits until the instance owns partitions: the group has settled, so records produced from
    /// now on are consumed as they arrive rather than found as a backlog.
    public func waitUntilAssigned(timeout: Duration = .seconds(30)) async throws -> Bool {
        try await self.waitForMetric("focusgate_assigned_partitions", atLeast: 1, timeout: timeout)
    }

    /// The process's resident set size in bytes (`VmRSS` of `/proc/<pid>/status`).
    public var residentBytes: Int? { self.statusBytes("VmRSS") }

    /// The most the process has held resident so far, in bytes (`VmHWM`: the kernel's high-water mark).
    public var peakResidentBytes: Int? { self.statusBytes("VmHWM") }

    private func statusBytes(_ field: String) -> Int? {
        guard
            let status = try? String(contentsOfFile: "/proc/\(self.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// Sends `signal` and waits for the exit status (the signal's number when one ended it). When
    /// neither a clean exit nor the signal sent ended the process, prints the end of its log, so
    /// that a test run's output says why.
    public func stop(_ signal: Int32) async -> Int32 {
        let (status, bySignal) = await self.child.stop(signal)
        if status != 0 && !(bySignal && status == signal) {
            // A crash report is long: print what precedes it and its head (what failed, where),
            // and keep the whole log where the run's other outputs are.
            let log = self.standardError
            let report = log.range(of: "Program crashed").map { found in
                let start = log.index(found.lowerBound, offsetBy: -2000, limitedBy: log.startIndex) ?? log.startIndex
                return log[start...].prefix(5000)
            }
            let kept = FileManager.default.currentDirectoryPath + "/.build/serve-\(self.processIdentifier)-ended.log"
            let copied = FileManager.default.createFile(atPath: kept, contents: Data(log.utf8))
            print(
                "focusgate serve (pid \(self.processIdentifier)) ended with \(bySignal ? "signal" : "status") \(status) after signal \(signal)\(copied ? " (whole log: \(kept))" : ""):\n\(report.map(String.init) ?? String(log.suffix(4000)))"
            )
        }
        return status
    }

    /// Waits until the process ends by itself; its exit status (the signal's number when one ended it).
    public func exitStatus() async -> Int32 {
        await self.child.exit().status
    }

    /// What the process wrote to standard error (complete once it exited).
    public var standardError: String {
        String(decoding: FileManager.default.contents(atPath: self.logPath) ?? Data(), as: UTF8.self)
    }
}
