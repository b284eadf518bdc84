import Foundation
import Synchronization

/// A real PostgreSQL server for tests: initdb in a temporary directory, started on a free
/// 127.0.0.1 port, stopped (and its directory removed) when the test process exits.
///
/// Uses the Debian `postgresql` package's binaries (`make test` installs it). As root, the server
/// runs as the `postgres` user, since PostgreSQL refuses to run as root.
public final class PostgresServer: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let directory: String
    private let binaries: String

    public var url: String { "postgres://focusgate@127.0.0.1:\(self.port)/postgres?sslmode=disable" }

    private static let shared = Mutex<Result<PostgresServer, Failure>?>(nil)

    /// A server of its own, for tests that stop or lock it; call ``destroy()`` when done.
    public static func startPrivate() throws -> PostgresServer {
        try PostgresServer()
    }

    /// The process-wide server, started on first use.
    public static func start() throws -> PostgresServer {
        try self.shared.withLock { shared in
            if let shared { return try shared.get() }
            let result = Result { () throws(Failure) -> PostgresServer in try PostgresServer() }
            shared = result
            if case .success = result {
                atexit { try? PostgresServer.shared.withLock { $0 }?.get().destroy() }
            }
            return try result.get()
        }
    }

    private init() throws(Failure) {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else {
            throw Failure(
                description: "PostgreSQL is not installed (apt-get install postgresql; `make test` does this as root)")
        }
        self.binaries = "/usr/lib/postgresql/\(version)/bin"
        self.directory = NSTemporaryDirectory() + "focusgate-pg-\(UUID().uuidString.prefix(8))"
        self.port = Int(freeLoopbackPort())
        do {
            try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot create \(self.directory): \(error)")
        }
        if getuid() == 0 {
            try self.run("/bin/chown", ["-R", "postgres:postgres", self.directory], asPostgres: false)
        }
        try self.run(
            "\(self.binaries)/initdb",
            ["-D", "\(self.directory)/data", "-U", "focusgate", "-A", "trust", "--no-sync", "-E", "UTF8"])
        try self.startServer()
    }

    /// Starts a stopped server (fault tests).
    public func startServer() throws(Failure) {
        try self.run(
            "\(self.binaries)/pg_ctl",
            [
                "-D", "\(self.directory)/data", "-l", "\(self.directory)/server.log", "-w", "-t", "30",
                "-o",
                "-p \(self.port) -k \(self.directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off",
                "start",
            ])
    }

    /// Stops the server (fast shutdown: connections are cut, committed data is kept).
    public func stopServer() throws(Failure) {
        try self.run("\(self.binaries)/pg_ctl", ["-D", "\(self.directory)/data", "-m", "fast", "-w", "stop"])
    }

    /// A URL for database `name` on this server.
    public func url(database name: String) -> String {
        "postgres://focusgate@127.0.0.1:\(self.port)/\(name)?sslmode=disable"
    }

    /// Starts `psql -c sql` without waiting (e.g. to hold a table lock while a test runs).
    public func psqlInBackground(_ sql: String, database: String = "postgres") async throws -> RunningProcess {
        try await RunningProcess(
            "/usr/bin/psql",
            ["-h", "127.0.0.1", "-p", "\(self.port)", "-U", "focusgate", "-d", database, "-c", sql],
            errorPath: "/dev/null")
    }

    /// Runs SQL with psql as the test superuser.
    public func psql(_ sql: String, database: String = "postgres") throws(Failure) {
        try self.run(
            "/usr/bin/psql",
            [
                "-h", "127.0.0.1", "-p", "\(self.port)", "-U", "focusgate", "-d", database, "-v", "ON_ERROR_STOP=1",
                "-c", sql,
            ], asPostgres: false)
    }

    /// Stops the server and removes its directory.
    public func destroy() {
        try? self.stopServer()
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+; Swift's Glibc module does not
    /// export it), found at run time.
    private static let addCloseFrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else { return nil }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    private func run(_ executable: String, _ arguments: [String], asPostgres: Bool = true) throws(Failure) {
        var command = [executable] + arguments
        if asPostgres && getuid() == 0 {
            command = ["/usr/sbin/runuser", "-u", "postgres", "--"] + command
        }
        // posix_spawn and waitpid directly: `pg_ctl start` leaves a daemon behind, which confuses
        // Foundation's Process (pipes held open, children not reaped). Output goes to a file.
        let outputPath = NSTemporaryDirectory() + "focusgate-pg-command-\(UUID().uuidString).log"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else is inherited. Foundation's Process learns that a child exited when the
        // child's end of a socket pair closes; a server daemon started here while another test
        // launched `focusgate serve` inherited that end and kept it open, so that child was never
        // reaped and `waitUntilExit` spun forever (a clean-clone CI run hung).
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot run \(command[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exitCode = (status >> 8) & 0xFF
        guard status & 0x7F == 0 && exitCode == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw Failure(
                description: "\(command.joined(separator: " ")) failed (status \(status)): \(text.suffix(800))")
        }
    }
}

/// A TCP port on 127.0.0.1 that the kernel considers free right now.
public func freeLoopbackPort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            _ = bind(fd, $0, length)
            _ = getsockname(fd, $0, &length)
        }
    }
    return UInt16(bigEndian: address.sin_port)
}
