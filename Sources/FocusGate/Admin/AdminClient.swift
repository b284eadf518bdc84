public import NIOCore
import NIOHTTP1
import NIOPosix

/// A client of the admin API: one `GET` over HTTP/1.1 and its answer. An instance asks its peers
/// with it (``PeerInstances``); `focusgate history` asks a running instance.
public struct AdminClient: Sendable {
    /// A status and a body.
    public struct Answer: Sendable {
        public var status: UInt
        public var body: [UInt8]
    }

    public enum Failure: Error, CustomStringConvertible {
        case closedEarly, tooLarge
        public var description: String {
            switch self {
            case .closedEarly: "the instance closed the connection before answering"
            case .tooLarge: "the answer is larger than the client takes"
            }
        }
    }

    /// Sent as `Authorization: Bearer` (`admin.token`).
    public var token: String?
    /// How long connecting may take.
    public var timeout: Duration
    /// Answers larger than this are refused.
    public var maxAnswerBytes: Int

    public init(token: String? = nil, timeout: Duration = .seconds(10), maxAnswerBytes: Int = 16 << 20) {
        self.token = token
        self.timeout = timeout
        self.maxAnswerBytes = maxAnswerBytes
    }

    /// `GET path` of the instance at `host`:`port` (the first address the name resolves to).
    public func get(_ path: String, host: String, port: Int) async throws -> Answer {
        let address = try await NIOThreadPool.singleton.runIfActive {
            try SocketAddress.makeAddressResolvingHost(host, port: port)
        }
        return try await self.get(path, host: host, address: address)
    }

    /// `GET path` at `address`, with `host` as the `Host` header.
    public func get(_ path: String, host: String, address: SocketAddress) async throws -> Answer {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.milliseconds(Int64(self.timeout / .milliseconds(1))))
            .connect(to: address) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var headers = HTTPHeaders([("Host", host), ("Accept", "application/json"), ("Connection", "close")])
            if let token = self.token { headers.add(name: "Authorization", value: "Bearer \(token)") }
            try await outbound.write(
                .head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)))
            try await outbound.write(.end(nil))
            var status: UInt = 0
            var body: [UInt8] = []
            for try await part in inbound {
                switch part {
                case .head(let head):
                    status = head.status.code
                case .body(let buffer):
                    guard body.count + buffer.readableBytes <= self.maxAnswerBytes else { throw Failure.tooLarge }
                    body.append(contentsOf: buffer.readableBytesView)
                case .end:
                    return Answer(status: status, body: body)
                }
            }
            throw Failure.closedEarly
        }
    }
}
