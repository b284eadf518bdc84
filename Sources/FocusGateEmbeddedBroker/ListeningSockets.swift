import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The listening TCP sockets of this process, found by port.
///
/// librdkafka 2.0.2's mock cluster accepts connections without `TCP_NODELAY`: a small response
/// written while the client has not yet acknowledged the previous one waits for that
/// acknowledgement, which the client's kernel delays by up to 40 ms (Nagle's algorithm meeting
/// delayed ACKs). Linux copies `TCP_NODELAY` from a listening socket to the sockets it accepts,
/// so setting it once on the cluster's listeners reaches every connection.
enum ListeningSockets {
    /// Sets `TCP_NODELAY` on this process's listening IPv4 sockets bound to one of `ports`.
    ///
    /// - Returns: The ports whose listener was found and set.
    @discardableResult
    static func disableNagle(ports: Set<UInt16>) -> Set<UInt16> {
        var done: Set<UInt16> = []
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for name in descriptors {
            guard let fd = Int32(name), let port = self.listeningPort(fd), ports.contains(port) else { continue }
            var on: Int32 = 1
            if setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 {
                done.insert(port)
            }
        }
        return done
    }

    /// The local port of `fd` when it is a listening IPv4 TCP socket.
    private static func listeningPort(_ fd: Int32) -> UInt16? {
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0, accepting == 1 else { return nil }
        return self.port(of: fd)
    }

    /// The IPv4 port of `fd`'s own end (`peer`: the other end's), or `nil` when it has none.
    static func port(of fd: Int32, peer: Bool = false) -> UInt16? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        guard named == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return UInt16(bigEndian: address.sin_port)
    }
}
