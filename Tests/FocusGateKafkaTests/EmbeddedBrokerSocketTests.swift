import FocusGateHarness
import FocusGateKafka
import Foundation
import Logging
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

    // MARK: - Sockets

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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = self.loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(fd >= 0 && result == 0, "cannot connect to 127.0.0.1:\(port)")
        return fd
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
