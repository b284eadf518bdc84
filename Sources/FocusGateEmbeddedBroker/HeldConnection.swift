import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback connection to one of this process's listeners, held open once the listener's side
/// has accepted it.
///
/// librdkafka 2.0.2's mock cluster takes a broker down by closing its listener and binding a new
/// socket to the same port at once, and aborts the process when that bind fails. It fails when a
/// connect anywhere on the machine was given that port as its own in between, which the kernel
/// does only while no socket holds the port: an accepted connection holds it through that instant.
final class HeldConnection {
    private let fd: Int32

    /// Connects to `127.0.0.1:port` and waits until this process has accepted the connection.
    ///
    /// - Returns: `nil` when the port cannot be connected to, or the connection was not accepted
    ///   within `timeout` (it is closed then).
    init?(port: UInt16, timeout: Duration) {
        guard let fd = Self.connect(port: port) else { return nil }
        self.fd = fd
        guard let local = ListeningSockets.port(of: fd) else {
            close(fd)
            return nil
        }
        let deadline = ContinuousClock.now + timeout
        while !Self.accepted(port: port, peer: local) {
            guard ContinuousClock.now < deadline else {
                close(fd)
                return nil
            }
            usleep(1000)
        }
    }

    deinit { close(self.fd) }

    /// Whether a socket of this process has `port` as its own end and `peer` as the other.
    static func accepted(port: UInt16, peer: UInt16) -> Bool {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.contains { name in
            guard let fd = Int32(name) else { return false }
            return ListeningSockets.port(of: fd) == port && ListeningSockets.port(of: fd, peer: true) == peer
        }
    }

    /// A blocking connect to `127.0.0.1:port`; the socket, or `nil` when it failed.
    static func connect(port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}
