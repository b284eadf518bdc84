public import FocusGateCore
import FocusGateKafka
import FocusGateThreads
import Foundation
public import Hummingbird
public import Logging
public import Prometheus
public import FocusGateStore

/// The admin HTTP API (docs/contract.md, docs/openapi.yaml): health, readiness, metrics, its own
/// OpenAPI document, contexts, badges, recent decisions, explain.
public struct AdminAPI: Sendable {
    /// API settings.
    public struct Configuration: Sendable {
        /// Required as `Authorization: Bearer <token>` on `/v1/*` when set (`admin.token`). Default: `nil`.
        public var token: String?
        /// Largest request body accepted; larger is 413 `too-large`. Default: 1 MiB.
        public var maxBodyBytes: Int = 1 << 20
        /// The configured rate limits (`rateLimits.*`), which explain applies to a context that sets none.
        public var rateLimits: RateLimitPolicy = .none
        /// `admin.host`: without a token, requests must name it (or `localhost`, or an IP
        /// address) in `Host` (``HostCheckMiddleware``). Default: `127.0.0.1`.
        public var listenerHost = "127.0.0.1"
        /// The group's instances (`admin.peers`, `host:port` each), asked about a user (badges,
        /// recent decisions) that no worker here holds. Default: none.
        public var peers: [String] = []
        /// The largest record `focus.invalidations` takes, key and value: a context whose inline
        /// invalidation would be larger is refused before it is stored (it could never be
        /// published). Default: librdkafka's `message.max.bytes` (1,000,000) less what a record's
        /// framing may take beside its key and value.
        public var maxInvalidationBytes: Int = Self.invalidationBytes(messageMaxBytes: 1_000_000)

        /// What a record of `messageMaxBytes` (the producer's `message.max.bytes`) leaves for an
        /// invalidation's key and value.
        public static func invalidationBytes(messageMaxBytes: Int) -> Int { messageMaxBytes - 1024 }

        public init(token: String? = nil, rateLimits: RateLimitPolicy = .none, peers: [String] = []) {
            self.token = token
            self.rateLimits = rateLimits
            self.peers = peers
        }
    }

    let configuration: Configuration
    let store: any ContextStore
    let publisher: any InvalidationPublishing
    let users: (any UserStateReading)?
    let registry: PrometheusCollectorRegistry
    let readiness: @Sendable () async -> Readiness
    let logger: Logger
    let peers: PeerInstances

    /// Creates the API over its collaborators.
    public init(
        configuration: Configuration,
        store: any ContextStore,
        publisher: any InvalidationPublishing,
        users: (any UserStateReading)?,
        registry: PrometheusCollectorRegistry,
        logger: Logger,
        readiness: @escaping @Sendable () async -> Readiness
    ) {
        self.configuration = configuration
        self.store = store
        self.publisher = publisher
        self.users = users
        self.registry = registry
        self.logger = logger
        self.readiness = readiness
        self.peers = PeerInstances(
            addresses: configuration.peers.compactMap { PeerInstances.Address($0) },
            token: configuration.token.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The routes.
    public func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: JSONErrorMiddleware())
        if (self.configuration.token ?? "").isEmpty {
            router.add(middleware: HostCheckMiddleware(listenerHost: self.configuration.listenerHost))
        }
        router.get("healthz") { _, _ in Self.json(Health()) }
        router.get("readyz") { _, _ in
            let readiness = await self.readiness()
            return Self.json(
                ReadinessAnswer(
                    ready: readiness.isReady, checks: readiness.checks, dependencies: readiness.dependencies),
                status: readiness.isReady ? .ok : .serviceUnavailable)
        }
        let ready = self.registry.makeGauge(
            descriptor: .focusgate(
                "ready", unit: "",
                "1 when the instance is ready (what /readyz answers), 0 otherwise; evaluated at each scrape.")
        )
        let storeReachable = self.registry.makeGauge(
            descriptor: .focusgate(
                "store_reachable", unit: "",
                "1 when the context store answers a ping (what /readyz reports as its store dependency), 0 otherwise; evaluated at each scrape."
            )
        )
        self.registry.makeGauge(
            descriptor: .focusgate(
                "build_info", unit: "",
                "Always 1: the FocusGate version this instance runs and the librdkafka it loaded."),
            labels: [("version", FocusGateRelease.version), ("librdkafka", FocusGateRelease.librdkafkaVersion)]
        ).set(to: 1)
        router.get("metrics") { _, _ in
            let readiness = await self.readiness()
            ready.set(to: readiness.isReady ? 1.0 : 0.0)
            if let store = readiness.dependencies["store"] { storeReachable.set(to: store ? 1.0 : 0.0) }
            var buffer: [UInt8] = []
            self.registry.emit(into: &buffer)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: buffer))
            )
        }
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(bytes: Self.openAPIDocument)))
        }
        let v1 = router.group("v1")
        if let token = self.configuration.token, !token.isEmpty {
            v1.add(middleware: BearerTokenMiddleware(token: Array(token.utf8)))
        }
        v1.add(middleware: JSONBodyMiddleware())
        v1.get("users/:userId/context") { _, context in try await self.getContext(context) }
        v1.put("users/:userId/context") { request, context in try await self.putContext(request, context) }
        v1.delete("users/:userId/context") { _, context in try await self.deleteContext(context) }
        v1.get("users/:userId/badges") { _, context in try await self.getBadges(context) }
        v1.get("instance/users/:userId/badges") { _, context in try await self.getInstanceBadges(context) }
        v1.get("users/:userId/notifications") { request, context in try await self.getHistory(request, context) }
        v1.get("users/:userId/notifications/:notificationId") { _, context in
            try await self.getNotification(context)
        }
        v1.get("instance/users/:userId/notifications") { request, context in
            try await self.getInstanceHistory(request, context)
        }
        v1.get("instance/users/:userId/notifications/:notificationId") { _, context in
            try await self.getInstanceNotification(context)
        }
        v1.get("users/:userId/status") { _, context in try await self.getStatus(context) }
        v1.post("explain") { request, context in try await self.explain(request, context) }
        return router
    }

    /// The OpenAPI 3.1 document of these routes (docs/openapi.yaml, compiled in).
    public static var openAPIDocument: [UInt8] { PackageResources.openapi_yaml }

    // MARK: - Contexts

    private func getContext(_ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        guard let stored = try await self.storeCall({ try await self.store.context(for: userID) }) else {
            throw AdminError(.notFound, "not-found", "the user has no Focus context")
        }
        return Self.json(data: stored.encoded())
    }

    /// Whether the user is focused now, and until when, as the stored context says (what
    /// `focus.status` publishes when it changes).
    private func getStatus(_ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        let stored = try await self.storeCall({ try await self.store.context(for: userID) })
        var status = FocusStatus(focused: false, until: nil, contextVersion: nil)
        if let stored {
            var compiler = FocusContextCompiler()
            do {
                status = try compiler.compile(stored).status(at: SystemWallClock().nowMilliseconds())
            } catch {
                throw Self.contextError(error)
            }
        }
        return Self.json(
            UserStatus(
                userId: userID, focused: status.focused, until: status.until.map(Timestamp.rfc3339(milliseconds:)),
                contextVersion: status.contextVersion))
    }

    private func putContext(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        let body = try await self.body(request)
        let document: FocusContext
        do {
            document = try FocusContext.decode(from: body)
        } catch {
            throw Self.contextError(error)
        }
        guard UserID.sameBytes(document.userID, userID) else {
            throw AdminError(.badRequest, "user-mismatch", "the body's userId differs from the path")
        }
        let invalidation = ContextInvalidation.inlineValue(for: document)
        let recordBytes = invalidation.count + userID.utf8.count
        guard recordBytes <= self.configuration.maxInvalidationBytes else {
            throw AdminError(
                .badRequest, "too-large",
                "the context's invalidation would be \(recordBytes) bytes; focus.invalidations takes at most \(self.configuration.maxInvalidationBytes)"
            )
        }
        switch try await self.storeCall({ try await self.store.put(document) }) {
        case .stored:
            break
        case .stale(let current):
            // A retry of a write whose invalidation failed: same version, same document → publish again.
            let existing = try await self.storeCall({ try await self.store.context(for: userID) })
            guard current == document.version, existing == document else {
                throw AdminError(
                    .conflict, "stale-version",
                    "the stored context has version \(current); a write needs a higher version",
                    currentVersion: current)
            }
        }
        do {
            try await self.publisher.publish(userID: userID, value: invalidation)
        } catch {
            self.logger.error(
                "invalidation not published", metadata: ["focusgate.user": "\(userID)", "error": "\(error)"])
            throw AdminError(
                .serviceUnavailable, "invalidation-failed",
                "the context is stored but its invalidation was not published; repeat the same PUT")
        }
        return Self.json(
            StoredContext(
                context: document,
                warnings: document.predicateWarnings.map {
                    .init(
                        field: $0.field, code: $0.warning.code, position: $0.warning.position,
                        message: $0.warning.message)
                }))
    }

    private func deleteContext(_ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        guard try await self.storeCall({ try await self.store.delete(userID: userID) }) != nil else {
            throw AdminError(.notFound, "not-found", "the user has no Focus context")
        }
        do {
            try await self.publisher.publish(userID: userID, value: nil)
        } catch {
            throw AdminError(
                .serviceUnavailable, "invalidation-failed",
                "the context is deleted but its invalidation was not published")
        }
        return Response(status: .noContent)
    }

    // MARK: - Explain

    /// The path parameter `name`, percent-decoded: a user or notification id with `/`, a space,
    /// `?` or non-ASCII characters arrives encoded (as ``pathSegment(_:)`` encodes it for peers).
    static func pathParameter(_ name: String, _ context: BasicRequestContext) throws -> String {
        guard let decoded = Self.percentDecoded(try context.parameters.require(name)) else {
            throw AdminError(.badRequest, "invalid-value", "\(name) is not valid percent-encoded UTF-8", field: name)
        }
        return decoded
    }

    /// `raw` with each `%XX` replaced by its byte; `nil` for a `%` without two hex digits after it,
    /// or bytes that are not UTF-8.
    static func percentDecoded(_ raw: String) -> String? {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        let text = Array(raw.utf8)
        guard text.contains(UInt8(ascii: "%")) else { return raw }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            guard text[index] == UInt8(ascii: "%") else {
                bytes.append(text[index])
                index += 1
                continue
            }
            guard index + 2 < text.count, let high = hex(text[index + 1]), let low = hex(text[index + 2]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 3
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `text` as one path segment: everything but unreserved characters percent-encoded.
    static func pathSegment(_ text: String) -> String {
        let allowed = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Where explanations are worked out: threads of their own, so that requests decoding large
    /// documents and evaluating predicates (each bounded by ``CompiledPredicate/evaluationBudget``)
    /// queue there and never hold Swift's cooperative pool, which answers health, readiness and
    /// every other request.
    static let explainThreads = ThreadsExecutor(threads: 2, name: "fg-explain")

    private func explain(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try await withTaskExecutorPreference(Self.explainThreads) { try await self.explainHere(request) }
    }

    private func explainHere(_ request: Request) async throws -> Response {
        let body = try await self.body(request)
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw AdminError(
                .badRequest, "invalid-json", "the body must be a JSON object {\"event\": {…}, \"context\": {…}}")
        }
        guard let eventObject = object["event"], JSONSerialization.isValidJSONObject(eventObject),
            let eventData = try? JSONSerialization.data(withJSONObject: eventObject)
        else {
            throw AdminError(.badRequest, "missing-field", "event is required and must be an object")
        }
        let event: NotificationEvent
        do {
            event = try EventDecoder().decode(Array(eventData))
        } catch {
            throw AdminError(
                .badRequest, error.code.rawValue, error.detail, field: error.field)
        }
        var focusContext: FocusContext?
        if let contextObject = object["context"], !(contextObject is NSNull) {
            guard JSONSerialization.isValidJSONObject(contextObject),
                let data = try? JSONSerialization.data(withJSONObject: contextObject)
            else {
                throw AdminError(.badRequest, "wrong-type", "context must be an object")
            }
            do {
                focusContext = try FocusContext.decode(from: data)
            } catch {
                throw Self.contextError(error)
            }
            guard focusContext.map({ UserID.sameBytes($0.userID, event.userID) }) ?? true else {
                throw AdminError(.badRequest, "user-mismatch", "the context's userId differs from the event's")
            }
        } else {
            focusContext = try await self.storeCall({ try await self.store.context(for: event.userID) })
        }
        var recent = DecisionExplanation.RecentActivity()
        if let recentObject = object["recent"], !(recentObject is NSNull) {
            guard JSONSerialization.isValidJSONObject(recentObject),
                let data = try? JSONSerialization.data(withJSONObject: recentObject),
                let decoded = try? JSONDecoder().decode(DecisionExplanation.RecentActivity.self, from: data),
                decoded.deliveredToUser >= 0, decoded.deliveredFromApp >= 0
            else {
                throw AdminError(
                    .badRequest, "wrong-type",
                    "recent must be {\"repeatedSender\": bool, \"deliveredToUser\": n, \"deliveredFromApp\": n}",
                    field: "recent")
            }
            recent = decoded
        }
        var instant = SystemWallClock().nowMilliseconds()
        if let at = object["at"], !(at is NSNull) {
            guard let text = at as? String, let parsed = Timestamp.parseRFC3339(text) else {
                throw AdminError(
                    .badRequest, "wrong-type", "at must be an RFC 3339 instant such as 2026-11-21T18:00:00Z",
                    field: "at")
            }
            instant = parsed
        }
        let explanation: DecisionExplanation
        do {
            explanation = try DecisionExplanation(
                event: event, context: focusContext, nowMilliseconds: instant,
                recent: recent, defaultRateLimits: self.configuration.rateLimits)
        } catch {
            throw Self.contextError(error)
        }
        return Self.json(explanation)
    }

    // MARK: - Helpers

    private func body(_ request: Request) async throws -> Data {
        var request = request
        let buffer = try await request.collectBody(upTo: self.configuration.maxBodyBytes)
        return Data(buffer.readableBytesView)
    }

    private func storeCall<T>(_ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch let error as ContextStoreError {
            throw AdminError(
                .serviceUnavailable, "store-unavailable", "the context store cannot be reached (\(error.code))")
        }
    }

    private static func contextError(_ error: FocusContextError) -> AdminError {
        AdminError(
            .badRequest, error.code, error.message, field: error.field, position: error.predicateError?.position,
            reason: error.predicateError?.code.rawValue)
    }

    /// `value` as a JSON answer, keys sorted (the admin API's answer types, docs/openapi.yaml).
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        // Encoding these plain answer types cannot fail.
        self.json(data: try! FocusContext.jsonEncoder.encode(value), status: status)
    }

    static func json(data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
