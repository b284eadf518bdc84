import FocusGateHarness
import FocusGateKafka
import Foundation
import Logging
import Synchronization
import Testing

@testable import FocusGateEmbeddedBroker

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Embedded broker sockets")
struct EmbeddedBrokerSocketTests {
    private let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test("the broker's accepted connections send without Nagle's delay (TCP_NODELAY)")
    func acceptedConnectionsDisableNagle() async throws {
        let broker = try EmbeddedKafkaBroker(logger: self.logger)
        defer { broker.shutdown() }
        let port = try #require(UInt16(broker.brokerAddresses.split(separator: ":").last ?? ""))
        let client = try Self.connect(port: port)
        defer { close(client) }
        let clientPort = try #require(Self.localPort(client))
        // The cluster's thread accepts the connection: wait for its end of it to exist (on a CI
        // machine whose two cores ran other suites too, that once took more than 10 s).
        let accepted = try await Wait.for("the broker accepting the connection", timeout: .seconds(60)) {
            Self.descriptors().first { Self.localPort($0) == port && Self.peerPort($0) == clientPort }
        } where: {
            $0 != nil
        }
        let fd = try #require(accepted)
        #expect(Self.option(fd, TCP_NODELAY) == 1)
        #expect(Self.option(client, TCP_NODELAY) == 0, "a plain client socket keeps the kernel's default")
    }

    @Test("only listeners on the given ports are changed")
    func onlyGivenPorts() throws {
        let listener = try Self.listen()
        defer { close(listener) }
        let port = try #require(Self.localPort(listener))
        #expect(ListeningSockets.disableNagle(ports: [port &+ 1]).isEmpty)
        #expect(Self.option(listener, TCP_NODELAY) == 0)
        #expect(ListeningSockets.disableNagle(ports: [port]) == [port])
        #expect(Self.option(listener, TCP_NODELAY) == 1)
    }

    @Test(
        "a broker taken down and brought up listens on its port again, without Nagle's delay, whether or not a client is connected"
    )
    func downAndUp() async throws {
        let broker = try EmbeddedKafkaBroker(brokerCount: 2, logger: self.logger)
        defer { broker.shutdown() }
        let port = try #require(broker.port(ofBroker: 2))
        for _ in 0..<20 {
            try broker.setBroker(2, up: false)
            #expect(Self.listener(port: port) == nil, "a broker that is down does not listen")
            try broker.setBroker(2, up: true)
        }
        let listener = try #require(Self.listener(port: port), "listening on 127.0.0.1:\(port) again")
        #expect(Self.option(listener, TCP_NODELAY) == 1)
        let client = try Self.connect(port: port)
        defer { close(client) }
        let clientPort = try #require(Self.localPort(client))
        try await Wait.until("the broker accepting a connection after it came back", timeout: .seconds(60)) {
            HeldConnection.accepted(port: port, peer: clientPort)
        }
    }

    @Test("a held connection is one the listener has accepted; one it does not accept in time is given up")
    func heldConnection() throws {
        let silent = try Self.listen()
        defer { close(silent) }
        #expect(HeldConnection(port: try #require(Self.localPort(silent)), timeout: .milliseconds(200)) == nil)

        let listener = try Self.listen()
        let accepted = Mutex<[Int32]>([])
        let accepting = Thread {
            while case let fd = accept(listener, nil, nil), fd >= 0 { accepted.withLock { $0.append(fd) } }
        }
        accepting.start()
        defer {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
            accepted.withLock { $0.forEach { close($0) } }
        }
        #expect(HeldConnection(port: try #require(Self.localPort(listener)), timeout: .seconds(30)) != nil)
    }

    // MARK: - Sockets

    /// This process's socket listening on `port`.
    private static func listener(port: UInt16) -> Int32? {
        self.descriptors().first { fd in
            var accepting: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0 && accepting == 1
                && self.localPort(fd) == port
        }
    }

    private static func descriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    }

    private static func option(_ fd: Int32, _ name: Int32) -> Int32 {
        var value: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, Int32(IPPROTO_TCP), name, &value, &length) == 0 ? value : -1
    }

    private static func localPort(_ fd: Int32) -> UInt16? { ListeningSockets.port(of: fd) }
    private static func peerPort(_ fd: Int32) -> UInt16? { ListeningSockets.port(of: fd, peer: true) }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func connect(port: UInt16) throws -> Int32 {
        try #require(HeldConnection.connect(port: port), "cannot connect to 127.0.0.1:\(port)")
    }

    private static func listen() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(fd >= 0 && bound == 0 && Glibc.listen(fd, 4) == 0, "cannot listen on 127.0.0.1")
        return fd
    }
}
