import FocusGateKafka
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Forwards TCP connections from a fixed loopback port to another address.
///
/// librdkafka 2.0.2's mock cluster only listens on ports the kernel picks. The embedded broker
/// serves its well-known bootstrap port (9092) through this forwarder; clients bootstrap through
/// it and then connect to the broker address the cluster advertises in its metadata.
final class TCPForwarder: Sendable {
    /// The port this forwarder listens on, on 127.0.0.1.
    let port: UInt16
    private let listener: Int32
    private let targetPort: UInt16
    private let connections = Mutex<Set<Int32>>([])
    private let stopped = Mutex(false)

    /// Starts listening on `127.0.0.1:port` and forwarding to `127.0.0.1:targetPort`.
    init(port: UInt16, targetPort: UInt16) throws(KafkaError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Self.socketError("socket") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let error = Self.socketError("listen on 127.0.0.1:\(port)")
            close(fd)
            throw error
        }
        self.port = port
        self.listener = fd
        self.targetPort = targetPort
        let thread = Thread { [self] in self.acceptLoop() }
        thread.name = "focusgate-forwarder-\(port)"
        thread.start()
    }

    /// Stops accepting and closes every forwarded connection. Idempotent.
    func stop() {
        let wasStopped = self.stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        shutdown(self.listener, Int32(SHUT_RDWR))
        close(self.listener)
        for fd in self.connections.withLock({ $0 }) {
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    deinit {
        self.stop()
    }

    // MARK: - Forwarding

    private func acceptLoop() {
        while true {
            let client = accept(self.listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return  // listener closed
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: self.targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard upstream >= 0, connected == 0 else {
                close(client)
                if upstream >= 0 { close(upstream) }
                continue
            }
            self.connections.withLock { $0.formUnion([client, upstream]) }
            let pair = ConnectionPair(a: client, b: upstream) { [self] in
                self.connections.withLock { $0.subtract([client, upstream]) }
            }
            for (from, to) in [(client, upstream), (upstream, client)] {
                let thread = Thread { pair.pump(from: from, to: to) }
                thread.name = "focusgate-forwarder-io"
                thread.start()
            }
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private static func socketError(_ what: String) -> KafkaError {
        KafkaError(code: .transport, message: "\(what): \(String(cString: strerror(errno)))")
    }
}

/// Two sockets forwarded to each other; the second pump to finish closes both.
private final class ConnectionPair: Sendable {
    private let a: Int32
    private let b: Int32
    private let finished = Mutex(0)
    private let onClose: @Sendable () -> Void

    init(a: Int32, b: Int32, onClose: @escaping @Sendable () -> Void) {
        self.a = a
        self.b = b
        self.onClose = onClose
    }

    func pump(from: Int32, to: Int32) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 65536, alignment: 16)
        defer { buffer.deallocate() }
        copying: while true {
            let received = read(from, buffer, 65536)
            if received < 0 && errno == EINTR { continue }
            guard received > 0 else { break }
            var sent = 0
            while sent < received {
                // MSG_NOSIGNAL: a peer that hung up must not raise SIGPIPE and kill the process.
                let written = send(to, buffer + sent, received - sent, Int32(MSG_NOSIGNAL))
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { break copying }
                sent += written
            }
        }
        // Wake the opposite pump, then let the last one out release the descriptors.
        shutdown(self.a, Int32(SHUT_RDWR))
        shutdown(self.b, Int32(SHUT_RDWR))
        let isLast = self.finished.withLock { count in
            count += 1
            return count == 2
        }
        if isLast {
            self.onClose()
            close(self.a)
            close(self.b)
        }
    }
}
