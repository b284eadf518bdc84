import Foundation
import HTTPTypes
public import Hummingbird
public import HummingbirdCore
public import Logging
public import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Synchronization

/// The admin listener's HTTP/1.1 channel: Hummingbird's, behind guards that keep a client from
/// holding the listener's resources (docs/contract.md, Admin API):
/// - at most ``Limits/maxConnections`` connections at once (`admin.maxConnections`); one more is
///   answered `503 too-many-connections` and closed;
/// - a request's headers and body must arrive within ``Limits/requestTimeout`` of its first byte
///   (`admin.requestTimeoutSeconds`), else `408 request-timeout` and the connection is closed
///   (a connection that sends nothing is the idle timeout's, `admin.idleTimeoutSeconds`);
/// - a request the HTTP parser refuses is answered `400 bad-request` with the API's JSON error
///   body, not a bare status.
public struct AdminChannel: ServerChildChannel {
    public typealias Value = HTTP1Channel.Value

    /// The guards' bounds.
    public struct Limits: Sendable {
        /// Connections held at once (`admin.maxConnections`). Default: `256`.
        public var maxConnections = 256
        /// From a request's first byte to its last (`admin.requestTimeoutSeconds`). Default: 10 s.
        public var requestTimeout: TimeAmount = .seconds(10)
        /// A connection that sends nothing for this long is closed (`admin.idleTimeoutSeconds`).
        /// Default: 60 s.
        public var idleTimeout: TimeAmount = .seconds(60)

        public init() {}
    }

    let inner: HTTP1Channel
    let limits: Limits
    let connections: ConnectionCount

    init(responder: @escaping HTTPChannelHandler.Responder, limits: Limits) {
        self.inner = HTTP1Channel(
            responder: responder,
            configuration: .init(
                additionalChannelHandlers: [DecodedRequestWatch()], idleTimeout: limits.idleTimeout))
        self.limits = limits
        self.connections = ConnectionCount()
    }

    /// The server builder for ``Application``'s `server:`.
    public static func builder(_ limits: Limits) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in AdminChannel(responder: responder, limits: limits) }
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuard(limits: self.limits, connections: self.connections))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return self.inner.setup(channel: channel, logger: logger)
    }

    public func handle(value: Value, logger: Logger) async {
        await self.inner.handle(value: value, logger: logger)
    }

    /// An error as a whole HTTP/1.1 response in bytes, for the guards below the HTTP codec; the
    /// connection closes after it.
    static func rawResponse(_ error: AdminError) -> ByteBuffer {
        let body = error.body
        var head = "HTTP/1.1 \(error.status.code) \(error.status.reasonPhrase)\r\ncontent-type: application/json\r\n"
        if let seconds = error.retryAfterSeconds { head += "retry-after: \(seconds)\r\n" }
        head += "connection: close\r\ncontent-length: \(body.count)\r\n\r\n"
        var buffer = ByteBuffer(string: head)
        buffer.writeBytes(body)
        return buffer
    }
}

/// The connections the listener holds.
final class ConnectionCount: Sendable {
    private let count = Atomic(0)

    /// Counts one more; returns the count with it.
    func open() -> Int { self.count.wrappingAdd(1, ordering: .relaxed).newValue }
    func close() { self.count.wrappingSubtract(1, ordering: .relaxed) }
}

/// First in the pipeline, on bytes: the connection cap and the request-read deadline.
///
/// The deadline starts with a request's first byte (any byte while no request is being read) and
/// ends when the request has been read (``RequestRead``, from ``DecodedRequestWatch``) or a
/// response starts; a client that trickles headers or a body for longer is answered `408` and
/// closed. A handler that takes long to answer a request read in time is not timed out here.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limits: AdminChannel.Limits
    private let connections: ConnectionCount
    private var counted = false
    private var deadline: Scheduled<Void>?
    private var closing = false

    init(limits: AdminChannel.Limits, connections: ConnectionCount) {
        self.limits = limits
        self.connections = connections
    }

    // The server sets a connection up once it is active (then `channelActive` has passed) or
    // before: it is counted when both happened.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.opened(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.opened(context)
        context.fireChannelActive()
    }

    private func opened(_ context: ChannelHandlerContext) {
        guard !self.counted else { return }
        self.counted = true
        if self.connections.open() > self.limits.maxConnections {
            // Once the connection's set-up is done: its pipeline is complete then.
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.execute {
                let (handler, context) = loopBound.value
                handler.refuse(
                    context,
                    AdminChannel.rawResponse(
                        AdminError(
                            .serviceUnavailable, "too-many-connections",
                            "the admin listener holds admin.maxConnections connections; retry shortly",
                            retryAfterSeconds: 1)))
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if self.counted {
            self.counted = false
            self.connections.close()
        }
        self.deadline?.cancel()
        self.deadline = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.closing else { return }
        if self.deadline == nil {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            self.deadline = context.eventLoop.scheduleTask(in: self.limits.requestTimeout) {
                let (handler, context) = loopBound.value
                handler.refuse(
                    context,
                    AdminChannel.rawResponse(
                        AdminError(
                            .requestTimeout, "request-timeout",
                            "the request's headers and body did not arrive within admin.requestTimeoutSeconds")))
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // A response starts: the request was read (or need not be).
        self.deadline?.cancel()
        self.deadline = nil
        context.write(data, promise: promise)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is RequestRead else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        // The request's last byte has come: how long its answer takes is not the client's doing.
        self.deadline?.cancel()
        self.deadline = nil
        promise?.succeed()
    }

    private func refuse(_ context: ChannelHandlerContext, _ response: ByteBuffer) {
        guard !self.closing else { return }
        self.closing = true
        self.deadline?.cancel()
        self.deadline = nil
        context.writeAndFlush(self.wrapOutboundOut(response)).whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

/// What ``DecodedRequestWatch`` tells ``ConnectionGuard`` (an outbound user event): a request's
/// last part has been decoded.
struct RequestRead: Sendable {}

/// After the HTTP codec: tells the guard below it where each request ends (``RequestRead``), and
/// answers a request the parser refuses with the API's JSON error (Hummingbird's own answer is a
/// bare `400`), unless a response has begun; the connection closes then.
final class DecodedRequestWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var responding = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = self.unwrapInboundIn(data) { context.triggerUserOutboundEvent(RequestRead(), promise: nil) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch self.unwrapOutboundIn(data) {
        case .head: self.responding = true
        case .end: self.responding = false
        case .body: break
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !self.responding else {
            context.close(promise: nil)
            return
        }
        let body = ByteBuffer(bytes: AdminError(.badRequest, "bad-request", "the request is not valid HTTP/1.1").body)
        let head = HTTPResponse(
            status: .badRequest,
            headerFields: [
                .contentType: "application/json", .connection: "close", .contentLength: "\(body.readableBytes)",
            ])
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        context.write(self.wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(self.wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}
