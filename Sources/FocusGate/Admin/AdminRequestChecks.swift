public import Hummingbird

/// Without `admin.token`, a request's `Host` must name the listener: `localhost`, an IP address,
/// or `admin.host`, with or without a port. A browser page whose DNS name was rebound to
/// 127.0.0.1 sends its own name, so it cannot drive a token-less API (421 `misdirected-request`).
/// A request without `Host` (HTTP/1.0) comes from no browser and passes.
struct HostCheckMiddleware<Context: RequestContext>: RouterMiddleware {
    /// `admin.host`, lower-cased.
    let listenerHost: String

    init(listenerHost: String) {
        self.listenerHost = listenerHost.lowercased()
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let host = request.head.authority, !Self.allowed(host, listener: self.listenerHost) {
            throw AdminError(
                .misdirectedRequest, "misdirected-request",
                "the Host header does not name this listener (set admin.token to serve other names)")
        }
        return try await next(request, context)
    }

    /// Whether `host` (a `Host` value) names the listener `listener`.
    static func allowed(_ host: String, listener: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") {
            // An IPv6 literal, with or without a port.
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            return rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber))
        }
        if let colon = name.lastIndex(of: ":") {
            let port = name[name.index(after: colon)...]
            guard !port.isEmpty, port.allSatisfy(\.isNumber) else { return false }
            name = name[..<colon]
        }
        if name == "localhost" || name == listener { return true }
        // An IPv4 literal: no DNS name to rebind.
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) }
    }
}

/// A request with a body must send it as `application/json` (a `charset` or other parameter
/// allowed): 415 `unsupported-media-type` otherwise, before the body is read.
struct JSONBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let hasBody =
            request.headers[.transferEncoding] != nil
            || (request.headers[.contentLength].flatMap { Int($0) } ?? 0) > 0
        if hasBody {
            let mediaType = (request.headers[.contentType] ?? "").split(separator: ";", maxSplits: 1).first
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard mediaType == "application/json" else {
                throw AdminError(
                    .unsupportedMediaType, "unsupported-media-type",
                    "the body must be sent as Content-Type: application/json")
            }
        }
        return try await next(request, context)
    }
}
