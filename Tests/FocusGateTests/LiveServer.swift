import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Testing

/// A router served by a real Hummingbird server on a free loopback port, and a client of it over
/// TCP (URLSession): the admin API's tests send what a caller sends and read what it reads. (No
/// HummingbirdTesting: it would add AsyncHTTPClient and HTTP/2 to every build of the tests.)
struct LiveServer: Sendable {
    /// `http://127.0.0.1:port`.
    let baseURL: String
    /// The port listened on.
    var port: Int { Int(self.baseURL.split(separator: ":").last!)! }

    /// A response as the client received it.
    struct Response {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: ByteBuffer
    }

    /// Serves `router` until `body` returns, then stops the server.
    static func run(
        _ router: Router<BasicRequestContext>, server: HTTPServerBuilder = .http1(),
        _ body: @Sendable (LiveServer) async throws -> Void
    ) async throws {
        let (ports, bound) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "focusgate.tests.admin")
        logger.logLevel = .critical
        let application = Application(
            router: router, server: server, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                bound.yield(channel.localAddress?.port ?? 0)
                bound.finish()
            }, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                throw CancellationError()
            }
            try await body(LiveServer(baseURL: "http://127.0.0.1:\(port)"))
        }
    }

    /// Sends one request and passes the response to `check`.
    func execute(
        uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil,
        _ check: (Response) async throws -> Void
    ) async throws {
        var request = URLRequest(url: URL(string: self.baseURL + uri)!)
        request.httpMethod = method.rawValue
        for field in headers {
            request.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        if let body {
            request.httpBody = Data(body.readableBytesView)
        }
        let (data, answer) = try await URLSession.shared.data(for: request)
        let http = try #require(answer as? HTTPURLResponse)
        var fields = HTTPFields()
        for case let (name as String, value as String) in http.allHeaderFields {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        try await check(Response(status: .init(code: http.statusCode), headers: fields, body: ByteBuffer(bytes: data)))
    }
}
