import Foundation

/// Tansu, an independent Kafka broker (Apache-2.0, written in Rust), as a child process for the
/// compatibility tests (`make test-compat`): one broker on a free 127.0.0.1 port with memory
/// storage, stopped with ``stop()`` or when the object goes.
///
/// Unlike librdkafka's mock cluster it writes transaction markers, stores offsets sent with a
/// transaction and hides aborted records from `read_committed` readers, so exactly-once can be
/// audited on it. librdkafka 2.0.2 cannot talk to it (its ApiVersions v3 answer fails to parse);
/// a build against librdkafka 2.8 can. `scripts/compat-deps.sh` installs it into the virtual
/// environment and the suite finds it through `FOCUSGATE_TEST_TANSU`.
public final class TansuBroker: Sendable {
    /// A failure to start the broker or to create a topic, with what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The broker's executable when this run is given one (`FOCUSGATE_TEST_TANSU`), else `nil`.
    public static var executable: String? {
        ProcessInfo.processInfo.environment["FOCUSGATE_TEST_TANSU"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public let port: UInt16
    /// The broker's log: a file, removed with the object.
    public let logPath: String
    private let executable: String
    private let process: RunningProcess

    /// `host:port` for `bootstrap.servers`.
    public var bootstrapServers: String { "127.0.0.1:\(self.port)" }

    /// Starts a broker and waits until it accepts connections (at most `timeout`).
    ///
    /// - Throws: ``Failure`` when it ends or does not listen in time.
    public init(executable: String, timeout: Duration = .seconds(30)) async throws {
        self.executable = executable
        self.port = freeLoopbackPort()
        self.logPath = ScratchDirectory.process.file("tansu", extension: "log")
        let address = "tcp://127.0.0.1:\(self.port)"
        self.process = try await RunningProcess(
            executable,
            [
                "broker", "--listener-url", address, "--advertised-listener-url", address,
                "--storage-engine", "memory://tansu/",
            ],
            environment: ["RUST_LOG": "warn"], errorPath: self.logPath)
        let process = self.process
        let port = self.port
        do {
            try await Wait.until("Tansu listening on 127.0.0.1:\(port)", timeout: timeout) {
                !process.isRunning || acceptsConnections(port: port)
            }
        } catch {
            throw Failure(description: "\(error)\n\(self.log)")
        }
        guard process.isRunning else { throw Failure(description: "Tansu ended at its start:\n\(self.log)") }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.logPath)
    }

    /// What the broker logged.
    public var log: String {
        (try? String(contentsOfFile: self.logPath, encoding: .utf8)) ?? ""
    }

    /// Creates a topic through the broker's own command line (`tansu topic create`).
    ///
    /// - Parameters:
    ///   - compacted: `cleanup.policy=compact`, as FocusGate requires of its compacted topics.
    /// - Throws: ``Failure`` with what the command printed when it fails.
    public func createTopic(_ name: String, partitions: Int, compacted: Bool = false) async throws {
        var arguments = [
            "topic", "create", "--broker", "tcp://127.0.0.1:\(self.port)", "--partitions", "\(partitions)",
        ]
        if compacted { arguments += ["--config", "cleanup.policy=compact"] }
        let result = try await ChildProcess.run(self.executable, arguments + [name])
        guard result.status == 0, !result.bySignal else {
            throw Failure(description: "tansu topic create \(name): status \(result.status)\n\(result.error)")
        }
    }

    /// Stops the broker (SIGTERM, then waits for its end).
    public func stop() async {
        _ = await self.process.stop(SIGTERM)
    }
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func acceptsConnections(port: UInt16) -> Bool {
    let fd = connectLoopback(port: port)
    guard fd >= 0 else { return false }
    close(fd)
    return true
}

/// A TCP connection to 127.0.0.1:`port`: its file descriptor, or -1 when it cannot be made.
public func connectLoopback(port: UInt16) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return -1 }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    address.sin_port = port.bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        close(fd)
        return -1
    }
    return fd
}
