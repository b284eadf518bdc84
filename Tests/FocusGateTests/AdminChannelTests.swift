@testable import FocusGate
import FocusGateHarness
import FocusGateStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection to a loopback port that sends and reads raw bytes, as a slow or hostile
/// client does.
final class RawConnection {
    let socket: Int32

    init(port: Int) throws {
        self.socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(self.socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0, "connect: \(errno)")
    }

    deinit { close(self.socket) }

    func send(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(self.socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The first response's bytes once its head has come (a body of `content-length: 2`, as
    /// the test router's `/healthz` answers, included); `nil` when it has not within `timeout`.
    func readResponse(timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n"), text[end.upperBound...].utf8.count >= 2 { return text }
            var poller = pollfd(fd: self.socket, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = recv(self.socket, &buffer, buffer.count, 0)
            if count <= 0 { return nil }
            received.append(contentsOf: buffer[0..<count])
        }
        return nil
    }

    /// Everything the server sends until it closes the connection, or `nil` when it has not
    /// closed it within `timeout`.
    func readUntilClosed(timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: self.socket, events: Int16(POLLIN), revents: 0)
            let left = deadline - ContinuousClock.now
            let ready = poll(&poller, 1, Int32(max(1, left / .milliseconds(1))))
            guard ready > 0 else { continue }
            let count = recv(self.socket, &buffer, buffer.count, 0)
            if count <= 0 { return String(decoding: received, as: UTF8.self) }
            received.append(contentsOf: buffer[0..<count])
        }
        return nil
    }
}

@Suite("The admin listener's guards", .serialized)
struct AdminChannelTests {
    static func limits(connections: Int = 8) -> AdminChannel.Limits {
        var limits = AdminChannel.Limits()
        limits.requestTimeout = .seconds(1)
        limits.idleTimeout = .seconds(30)
        limits.maxConnections = connections
        return limits
    }

    static func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("healthz") { _, _ in "{}" }
        router.put("echo") { request, _ in
            var request = request
            return String(buffer: try await request.collectBody(upTo: 1 << 20))
        }
        return router
    }

    @Test(
        "headers or a body that trickle in for longer than admin.requestTimeoutSeconds are answered 408 with a JSON error and the connection closed",
        arguments: [
            "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
            "PUT /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":",
        ])
    func slowRequest(partial: String) async throws {
        try await LiveServer.run(Self.router(), server: AdminChannel.builder(Self.limits())) { server in
            let connection = try RawConnection(port: server.port)
            let started = ContinuousClock.now
            connection.send(partial)
            let answer = try #require(connection.readUntilClosed(timeout: .seconds(10)), "closed by the server")
            let elapsed = ContinuousClock.now - started
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
            #expect(answer.contains("content-type: application/json"))
            #expect(answer.contains(#""error":"request-timeout""#))
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(5), "\(elapsed)")
        }
    }

    @Test(
        "the deadline runs from a request's first byte to its response: a request answered in time, an idle connection and the next request are not timed out"
    )
    func requestsInTime() throws {
        let loop = EmbeddedEventLoop()
        let channel = try Self.guarded(loop)
        try channel.writeInbound(ByteBuffer(string: "GET /healthz HTTP/1.1\r\n"))
        loop.advanceTime(by: .milliseconds(900))
        try channel.writeOutbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n"))  // the response starts in time
        loop.advanceTime(by: .seconds(5))  // idle: no request is being read
        #expect(try Self.written(channel) == ["HTTP/1.1 200 OK\r\n\r\n"])
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(string: "GET /healthz HTTP/1.1\r\n"))  // the next request starts its own
        loop.advanceTime(by: .milliseconds(999))
        #expect(try Self.written(channel).isEmpty && channel.isActive)
        loop.advanceTime(by: .milliseconds(1))
        let answer = try Self.written(channel)
        #expect(answer.count == 1 && answer[0].hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer)")
        #expect(answer.first?.contains(#""error":"request-timeout""#) == true)
        #expect(!channel.isActive, "closed after the 408")
    }

    @Test("a request read in time is not timed out while its answer is worked out, however long that takes")
    func slowAnswer() throws {
        let loop = EmbeddedEventLoop()
        let channel = try Self.guarded(loop)
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
        try channel.pipeline.syncOperations.addHandlers(HTTP1ToHTTPServerCodec(secure: false), DecodedRequestWatch())
        try channel.writeInbound(
            ByteBuffer(string: "PUT /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"))
        var parts: [HTTPRequestPart] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(part) }
        #expect(parts.count == 3, "head, body and end reach the handler")
        loop.advanceTime(by: .seconds(5))
        #expect(try Self.written(channel).isEmpty, "no 408 for the handler's time")
        #expect(channel.isActive)
    }

    @Test("the cap counts the connections open on the listener: one more is refused, a closed one frees its slot")
    func connectionCapCounted() throws {
        let loop = EmbeddedEventLoop()
        let connections = ConnectionCount()
        let first = try Self.guarded(loop, connections: connections, limit: 1)
        let second = try Self.guarded(loop, connections: connections, limit: 1)
        loop.run()
        #expect(try Self.written(first).isEmpty && first.isActive)
        let refused = try Self.written(second)
        #expect(refused.count == 1 && refused[0].hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(refused)")
        #expect(refused.first?.contains("retry-after: 1\r\n") == true)
        #expect(!second.isActive)
        _ = try first.finish()
        let third = try Self.guarded(loop, connections: connections, limit: 1)
        loop.run()
        #expect(try Self.written(third).isEmpty && third.isActive, "the closed connections freed their slots")
    }

    /// An active channel with only the guard, on `loop`.
    static func guarded(
        _ loop: EmbeddedEventLoop, connections: ConnectionCount = ConnectionCount(), limit: Int = 8
    ) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(
            handler: ConnectionGuard(limits: Self.limits(connections: limit), connections: connections), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// What the guard has written since last asked, each write as text.
    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        var writes: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { writes.append(String(buffer: buffer)) }
        return writes
    }

    @Test(
        "beyond admin.maxConnections a connection is answered 503 too-many-connections and closed; a freed slot is used again"
    )
    func connectionCap() async throws {
        try await LiveServer.run(Self.router(), server: AdminChannel.builder(Self.limits(connections: 3))) { server in
            var held = try (0..<3).map { _ in try RawConnection(port: server.port) }
            // The server has counted each once it has answered it.
            for connection in held {
                connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let answer = connection.readResponse(timeout: .seconds(5))
                #expect(answer?.hasPrefix("HTTP/1.1 200") == true, "\(String(describing: answer))")
            }
            let extra = try RawConnection(port: server.port)
            let refused = try #require(extra.readUntilClosed(timeout: .seconds(5)), "the extra connection closed")
            #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused)")
            #expect(refused.contains("retry-after: 1") && refused.contains(#""error":"too-many-connections""#))
            held.removeLast()  // closes it
            try await Wait.until("a slot freed", timeout: .seconds(5)) {
                let next = try RawConnection(port: server.port)
                next.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                return next.readUntilClosed(timeout: .seconds(2))?.hasPrefix("HTTP/1.1 200") == true
            }
        }
    }

    @Test("a request the HTTP parser refuses is answered 400 with the API's JSON error body")
    func parserError() async throws {
        try await LiveServer.run(Self.router(), server: AdminChannel.builder(Self.limits())) { server in
            for garbage in ["GARBAGE\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n"] {
                let connection = try RawConnection(port: server.port)
                connection.send(garbage)
                let answer = try #require(connection.readUntilClosed(timeout: .seconds(5)))
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
                #expect(answer.lowercased().contains("content-type: application/json"))
                #expect(answer.contains(#""error":"bad-request""#))
            }
        }
    }

    // MARK: - The API's own checks

    /// One raw request to the API and its whole answer (the request asks the server to close).
    static func raw(_ server: LiveServer, _ request: String) throws -> String {
        let connection = try RawConnection(port: server.port)
        connection.send(request)
        return try #require(connection.readUntilClosed(timeout: .seconds(10)))
    }

    @Test(
        "without a token, a Host that does not name the listener is 421; localhost, IP addresses and admin.host pass; with a token no Host is refused"
    )
    func hostChecked() async throws {
        let fixture = try await AdminFixture()
        try await LiveServer.run(fixture.router()) { server in
            for host in [
                "evil.example", "evil.example:\(server.port)", "127.0.0.1.evil.example", "localhost.evil.example:80",
            ] {
                let answer = try Self.raw(server, "GET /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
                #expect(answer.hasPrefix("HTTP/1.1 421"), "\(host): \(answer)")
                #expect(answer.contains(#""error":"misdirected-request""#))
            }
            for host in [
                "127.0.0.1:\(server.port)", "localhost:\(server.port)", "LOCALHOST", "[::1]:\(server.port)", "10.0.0.7",
            ] {
                let answer = try Self.raw(server, "GET /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
                #expect(answer.hasPrefix("HTTP/1.1 200"), "\(host): \(answer)")
            }
        }
        try await LiveServer.run(fixture.router(token: String(repeating: "t", count: 40))) { server in
            let answer = try Self.raw(
                server, "GET /healthz HTTP/1.1\r\nHost: focusgate.example.com\r\nConnection: close\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        }
        await fixture.shutdown()
    }

    @Test("a body must be application/json (a charset allowed): 415 otherwise, before anything is stored")
    func jsonBodiesOnly() async throws {
        let fixture = try await AdminFixture()
        let context = #"{"userId":"u-1","version":1,"focus":"Work","apps":{}}"#
        try await LiveServer.run(fixture.router()) { server in
            for type in ["text/plain", "application/x-www-form-urlencoded", nil] as [String?] {
                let header = type.map { "Content-Type: \($0)\r\n" } ?? ""
                let answer = try Self.raw(
                    server,
                    "PUT /v1/users/u-1/context HTTP/1.1\r\nHost: 127.0.0.1\r\n\(header)Content-Length: \(context.utf8.count)\r\nConnection: close\r\n\r\n\(context)"
                )
                #expect(answer.hasPrefix("HTTP/1.1 415"), "\(type ?? "none"): \(answer)")
                #expect(answer.contains(#""error":"unsupported-media-type""#))
            }
            #expect(try await fixture.store.context(for: "u-1") == nil)
            let answer = try Self.raw(
                server,
                "PUT /v1/users/u-1/context HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: Application/JSON; charset=utf-8\r\nContent-Length: \(context.utf8.count)\r\nConnection: close\r\n\r\n\(context)"
            )
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        }
        await fixture.shutdown()
    }

    @Test(
        "a number that does not fit is 400 invalid-value naming the field, not invalid-json",
        arguments: [
            (#"99999999999999999999"#, "version"), (#"1.5"#, "version"), (#"-99999999999999999999"#, "version"),
            (#"1e400"#, nil),
        ] as [(String, String?)])
    func numbersOutOfRange(number: String, field: String?) async throws {
        let fixture = try await AdminFixture()
        try await LiveServer.run(fixture.router()) { server in
            try await server.execute(
                uri: "/v1/users/u-1/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"userId":"u-1","version":\#(number),"focus":"Work","apps":{}}"#)
            ) { response in
                #expect(response.status == .badRequest)
                #expect(json(response.body)["error"] as? String == "invalid-value")
                #expect(json(response.body)["field"] as? String == field)
            }
            // Not valid JSON stays invalid-json.
            try await server.execute(
                uri: "/v1/users/u-1/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"userId":"u-1","version":1,"#)
            ) { response in
                #expect(json(response.body)["error"] as? String == "invalid-json")
            }
        }
        await fixture.shutdown()
    }

    @Test("explanations under the costliest predicates run on their own threads: /healthz answers at once meanwhile")
    func explainOffThePool() async throws {
        let fixture = try await AdminFixture()
        let pattern = "*" + String(repeating: "a", count: 15_000) + "?b"
        let criteria = String(repeating: "a", count: 65_000)
        let body =
            #"{"event":{"id":"n","userId":"u","appId":"chat","filterCriteria":"\#(criteria)"},"context":{"userId":"u","version":1,"focus":"Work","apps":{"chat":{"filterPredicate":"SELF LIKE '\#(pattern)' OR SELF LIKE '\#(pattern)'"}}}}"#
        try await LiveServer.run(fixture.router()) { server in
            try await withThrowingTaskGroup(of: Duration.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let started = ContinuousClock.now
                        try await server.execute(
                            uri: "/v1/explain", method: .post, headers: [.contentType: "application/json"],
                            body: ByteBuffer(string: body)
                        ) { response in
                            #expect(response.status == .ok)
                            let reason = json(response.body)["reason"] as? String
                            #expect(reason == "predicate-mismatch" || reason == "predicate-error")
                        }
                        return ContinuousClock.now - started
                    }
                }
                let started = ContinuousClock.now
                try await server.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                #expect(ContinuousClock.now - started < .seconds(1))
                for try await elapsed in group { #expect(elapsed < .seconds(5), "\(elapsed)") }
            }
        }
        await fixture.shutdown()
    }
}
