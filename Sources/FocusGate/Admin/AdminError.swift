import FocusGateCore
import Foundation
public import HTTPTypes
public import Hummingbird

/// An admin API error: an HTTP status and a JSON body `{"error": code, "message": …}` with a
/// stable code, plus the details some codes carry (``ErrorAnswer``).
public struct AdminError: Error, Sendable, HTTPResponseError {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    /// The offending field.
    public var field: String?
    /// A predicate error's position and reason.
    public var position: Int?
    public var reason: String?
    /// The stored version, with `stale-version`.
    public var currentVersion: Int64?
    /// Sent as `Retry-After` (seconds) with a `503` that a retry soon can mend.
    public var retryAfterSeconds: Int?

    public init(
        _ status: HTTPResponse.Status, _ code: String, _ message: String, field: String? = nil,
        position: Int? = nil, reason: String? = nil, currentVersion: Int64? = nil, retryAfterSeconds: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.position = position
        self.reason = reason
        self.currentVersion = currentVersion
        self.retryAfterSeconds = retryAfterSeconds
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = AdminAPI.json(data: self.body, status: self.status)
        if let seconds = self.retryAfterSeconds { response.headers[.retryAfter] = "\(seconds)" }
        return response
    }

    /// The JSON body, ``ErrorAnswer``: also what the listener's guards below the HTTP codec send.
    var body: Data {
        // Encoding this plain answer type cannot fail.
        try! FocusContext.jsonEncoder.encode(
            ErrorAnswer(
                error: self.code, message: self.message, field: self.field, position: self.position,
                reason: self.reason, currentVersion: self.currentVersion))
    }
}

/// Turns every error leaving a handler into a JSON error body, so that clients always get
/// `{"error", "message"}` (Hummingbird's own errors included: unknown route, body too large).
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as AdminError {
            throw error
        } catch let error as any HTTPResponseError {
            let code: String
            switch error.status {
            case .notFound: code = "not-found"
            case .contentTooLarge: code = "too-large"
            case .methodNotAllowed: code = "method-not-allowed"
            case .unauthorized: code = "unauthorized"
            default: code = error.status.code < 500 ? "bad-request" : "internal"
            }
            throw AdminError(error.status, code, (error as? HTTPError)?.body ?? error.status.reasonPhrase)
        }
    }
}

/// Requires `Authorization: Bearer <token>` (the scheme in any case, as RFC 9110 has it; the
/// token compared in constant time).
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let header = Array((request.headers[.authorization] ?? "").utf8)
        let scheme = Array("bearer ".utf8)
        guard header.count > scheme.count,
            zip(header, scheme).allSatisfy({ given, expected in given | 0x20 == expected })
        else {
            throw AdminError(
                .unauthorized, "unauthorized", "this endpoint requires Authorization: Bearer <admin.token>")
        }
        let given = Array(header.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") })
        var difference = given.count ^ self.token.count
        for index in 0..<max(given.count, self.token.count) {
            difference |= Int(
                (index < given.count ? given[index] : 0) ^ (index < self.token.count ? self.token[index] : 0))
        }
        guard difference == 0 else {
            throw AdminError(.unauthorized, "unauthorized", "the bearer token is not valid")
        }
        return try await next(request, context)
    }
}
