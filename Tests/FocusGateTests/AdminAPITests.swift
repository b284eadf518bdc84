import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateStore
import Foundation
import HTTPTypes
import Hummingbird
import Prometheus
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Admin HTTP API", .serialized)
struct AdminAPITests {
    @Test("health, readiness and metrics stay open")
    func healthReadinessMetrics() async throws {
        let fixture = try await AdminFixture()
        _ = fixture.registry.makeCounter(
            descriptor: .init(
                namespace: "focusgate", metricName: "events_consumed", unitName: "total", helpText: "Records consumed.")
        )
        try await LiveServer.run(fixture.router(token: "secret")) { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                let health = json(response.body)
                #expect(health["version"] as? String == FocusGateRelease.version)
                #expect(health["librdkafka"] as? String == RDKafkaLibrary.version)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                let text = String(buffer: response.body)
                #expect(text.contains("focusgate_events_consumed_total 0"))
                #expect(
                    text.contains(
                        #"focusgate_build_info{version="\#(FocusGateRelease.version)",librdkafka="\#(RDKafkaLibrary.version)"} 1"#
                    ), "\(text)")
                #expect(text.contains("focusgate_store_reachable 1"))
            }
        }
        try await LiveServer.run(fixture.router(ready: false)) { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(json(response.body)["ready"] as? Bool == false)
            }
        }
        // A store outage is reported, and the instance stays ready: the state's answers need no store.
        try await LiveServer.run(fixture.router(storeReachable: false)) { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .ok)
                let answer = json(response.body)
                #expect(answer["ready"] as? Bool == true)
                #expect((answer["dependencies"] as? [String: Bool])?["store"] == false)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(String(buffer: response.body).contains("focusgate_store_reachable 0"))
            }
        }
        await fixture.shutdown()
    }

    @Test(
        "a version beyond 2^53 - 1 is refused with 400; the largest is stored and published exactly; a context its invalidation could not carry is refused before it is stored"
    )
    func versionAndSizeLimits() async throws {
        let fixture = try await AdminFixture()
        @Sendable func context(version: String, blob: Int = 0) -> String {
            #"{"userId":"u-7","version":\#(version),"focus":"Work","apps":{"chat":{"parameters":{"blob":"\#(String(repeating: "x", count: blob))"}}}}"#
        }
        try await LiveServer.run(fixture.router()) { client in
            // 2^53 + 1: a double would hold 2^53, and every instance would refuse the invalidation.
            try await client.execute(
                uri: "/v1/users/u-7/context", method: .put,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(string: context(version: "9007199254740993"))
            ) { response in
                #expect(response.status == .badRequest)
                #expect(json(response.body)["error"] as? String == "invalid-value")
                #expect(json(response.body)["field"] as? String == "version")
            }
            // About 999,900 bytes: under the 1 MiB body limit, over what focus.invalidations takes.
            try await client.execute(
                uri: "/v1/users/u-7/context", method: .put,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(string: context(version: "1", blob: 999_800))
            ) { response in
                #expect(response.status == .badRequest)
                #expect(json(response.body)["error"] as? String == "too-large")
            }
            try await client.execute(uri: "/v1/users/u-7/context", method: .get) { response in
                #expect(response.status == .notFound, "refused before the store write")
            }
            try await client.execute(
                uri: "/v1/users/u-7/context", method: .put,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(string: context(version: "9007199254740991"))
            ) { #expect($0.status == .ok) }
        }
        let published = try fixture.invalidations()
        try #require(published.count == 1)
        let inline = try ContextInvalidation.parse(
            key: Array("u-7".utf8), value: published[0].value.map { Array($0.utf8) })
        guard case .inline(let stored) = inline else { Issue.record("expected an inline invalidation"); return }
        #expect(stored.version == 9_007_199_254_740_991, "the version arrives exactly")
        await fixture.shutdown()
    }

    @Test("path parameters are percent-decoded: an id with a space, '/', '?' or non-ASCII characters can be managed")
    func percentDecodedPath() async throws {
        let fixture = try await AdminFixture()
        let body = #"{"userId":"café /?","version":1,"focus":"Work"}"#
        try await LiveServer.run(fixture.router()) { client in
            let path = "/v1/users/caf%C3%A9%20%2F%3F/context"
            try await client.execute(
                uri: path, method: .put, headers: [.contentType: "application/json"], body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .ok, "\(String(buffer: response.body))")
            }
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .ok)
                #expect(json(response.body)["userId"] as? String == "café /?")
            }
        }
        #expect(try await fixture.store.context(for: "café /?")?.version == 1)
        await fixture.shutdown()
    }

    @Test("PUT validates, stores and publishes an inline invalidation; GET returns it; DELETE publishes a tombstone")
    func contextLifecycle() async throws {
        let fixture = try await AdminFixture()
        try await LiveServer.run(fixture.router()) { client in
            try await client.execute(uri: "/v1/users/u-42/context", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(json(response.body)["error"] as? String == "not-found")
            }
            try await client.execute(
                uri: "/v1/users/u-42/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: contextBody)
            ) { response in
                #expect(response.status == .ok)
                #expect((json(response.body)["context"] as? [String: Any])?["version"] as? Int == 17)
            }
            try await client.execute(uri: "/v1/users/u-42/context", method: .get) { response in
                #expect(response.status == .ok)
                let body = json(response.body)
                #expect(body["focus"] as? String == "Work")
                #expect(
                    ((body["apps"] as? [String: Any])?["com.example.chat"] as? [String: Any])?["parameters"]
                        as? [String: String] == ["status": "Working"])
            }
            // The same PUT again is idempotent (e.g. a retry after a failed publish); an older one conflicts.
            try await client.execute(
                uri: "/v1/users/u-42/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: contextBody)
            ) { #expect($0.status == .ok) }
            let older = contextBody.replacingOccurrences(of: "\"version\":17", with: "\"version\":16")
            try await client.execute(
                uri: "/v1/users/u-42/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: older)
            ) {
                response in
                #expect(response.status == .conflict)
                #expect(json(response.body)["error"] as? String == "stale-version")
                #expect(json(response.body)["currentVersion"] as? Int == 17)
            }
            try await client.execute(uri: "/v1/users/u-42/context", method: .delete) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/v1/users/u-42/context", method: .delete) { #expect($0.status == .notFound) }
        }
        let published = try fixture.invalidations()
        try #require(published.count == 3)
        #expect(published.allSatisfy { $0.key == "u-42" })
        let inline = try ContextInvalidation.parse(
            key: Array("u-42".utf8), value: published[0].value.map { Array($0.utf8) })
        guard case .inline(let context) = inline else { Issue.record("expected an inline invalidation"); return }
        #expect(context.version == 17)
        #expect(published[2].value == nil, "DELETE publishes a tombstone")
        await fixture.shutdown()
    }

    @Test(
        "bad requests get 400 with stable codes",
        arguments: [
            ("{", "invalid-json"),
            (#"{"userId":"someone-else","version":1}"#, "user-mismatch"),
            (#"{"userId":"u-42"}"#, "missing-field"),
            (#"{"userId":"u-42","version":"x"}"#, "wrong-type"),
            (
                #"{"userId":"u-42","version":1,"apps":{"a":{"filterPredicate":"SELF MATCHES 'x'"}}}"#,
                "invalid-predicate"
            ),
        ])
    func badPut(body: String, code: String) async throws {
        let fixture = try await AdminFixture()
        try await LiveServer.run(fixture.router()) { client in
            try await client.execute(
                uri: "/v1/users/u-42/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: body)
            ) {
                response in
                #expect(response.status == .badRequest)
                #expect(json(response.body)["error"] as? String == code)
                #expect((json(response.body)["message"] as? String)?.isEmpty == false)
            }
        }
        await fixture.shutdown()
    }

    @Test("a refused predicate reports the parser's position and reason")
    func predicateErrorDetails() async throws {
        let fixture = try await AdminFixture()
        try await LiveServer.run(fixture.router()) { client in
            let body = #"{"userId":"u","version":1,"apps":{"a":{"filterPredicate":"SELF.length > 3"}}}"#
            try await client.execute(
                uri: "/v1/users/u/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: body)
            ) {
                response in
                let object = json(response.body)
                #expect(object["field"] as? String == "apps.a.filterPredicate")
                #expect(object["position"] as? Int == 4)
                #expect(object["reason"] as? String == "key-path")
            }
        }
        await fixture.shutdown()
    }

    @Test("bearer token on /v1/*; body size limit; unknown routes answer JSON")
    func authAndLimits() async throws {
        let fixture = try await AdminFixture()
        try await LiveServer.run(fixture.router(token: "s3cret", maxBodyBytes: 64)) { client in
            try await client.execute(uri: "/v1/users/u/context", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(json(response.body)["error"] as? String == "unauthorized")
            }
            try await client.execute(
                uri: "/v1/users/u/context", method: .get, headers: [.authorization: "Bearer wrong"]
            ) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/v1/users/u/context", method: .get, headers: [.authorization: "Bearer s3cret"]
            ) { #expect($0.status == .notFound) }
            // The scheme is case-insensitive (RFC 9110); the token is not, nor is another scheme a bearer.
            for accepted in ["bearer s3cret", "BEARER s3cret"] {
                try await client.execute(
                    uri: "/v1/users/u/context", method: .get, headers: [.authorization: accepted]
                ) { #expect($0.status == .notFound, "\(accepted)") }
            }
            for refused in ["bearer S3CRET", "Bearers3cret", "Basic s3cret", "bearer "] {
                try await client.execute(
                    uri: "/v1/users/u/context", method: .get, headers: [.authorization: refused]
                ) { #expect($0.status == .unauthorized, "\(refused)") }
            }
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
            try await client.execute(
                uri: "/v1/users/u/context", method: .put,
                headers: [.authorization: "Bearer s3cret", .contentType: "application/json"],
                body: ByteBuffer(string: String(repeating: " ", count: 200))
            ) { response in
                #expect(response.status == .contentTooLarge)
                #expect(json(response.body)["error"] as? String == "too-large")
            }
            try await client.execute(uri: "/v1/nothing", method: .get, headers: [.authorization: "Bearer s3cret"]) {
                response in
                #expect(response.status == .notFound)
                #expect(json(response.body)["error"] as? String == "not-found")
            }
        }
        await fixture.shutdown()
    }

    @Test(
        "any instance answers: the peer that holds the user answers for it, [] only when the instances that answered hold every partition between them, else 503 owner-unavailable with Retry-After"
    )
    func peersAnswer() async throws {
        let fixture = try await AdminFixture()
        let badge = Badge(appID: "chat", badge: 2, unread: 2, sequence: 7)
        // Instance B holds partition 1 and the user u-b; A holds partition 0; C is restoring.
        let instanceB = InstanceAnswers(held: ["u-b": [badge]], partitions: [1])
        let instanceA = InstanceAnswers(partitions: [0])
        let restoring = InstanceAnswers(partitions: [])
        let token = "group-token"
        let bearer: HTTPFields = [.authorization: "Bearer \(token)"]
        /// The user's badges as the instance answers: status, body, `Retry-After`.
        @Sendable func status(_ server: LiveServer, _ user: String) async throws -> (
            HTTPResponse.Status, [String: Any], String?
        ) {
            var answer: (HTTPResponse.Status, ByteBuffer, String?) = (.internalServerError, ByteBuffer(), nil)
            try await server.execute(uri: "/v1/users/\(user)/badges", method: .get, headers: bearer) { response in
                answer = (response.status, response.body, response.headers[.retryAfter])
            }
            return (answer.0, json(answer.1), answer.2)
        }
        try await LiveServer.run(fixture.router(token: token, users: instanceB)) { b in
            let peerB = b.baseURL.replacingOccurrences(of: "http://", with: "")
            // B's own answers, as its peers read them.
            try await b.execute(uri: "/v1/instance/users/u-b/badges", method: .get, headers: bearer) { response in
                let answer = json(response.body)
                #expect(answer["held"] as? Bool == true)
                #expect((answer["badges"] as? [[String: Any]])?.first?["badge"] as? Int == 2)
            }
            try await b.execute(uri: "/v1/instance/users/u-a/badges", method: .get, headers: bearer) { response in
                let answer = json(response.body)
                #expect(answer["held"] as? Bool == false)
                #expect(answer["partitions"] as? [Int] == [1] && answer["partitionCount"] as? Int == 2)
            }
            // A, with B and an address nothing listens on as its peers.
            try await LiveServer.run(
                fixture.router(token: token, users: instanceA, peers: [peerB, "127.0.0.1:1"])
            ) { a in
                let (heldStatus, held, _) = try await status(a, "u-b")
                #expect(heldStatus == .ok)
                #expect(held["userId"] as? String == "u-b")
                let items = held["badges"] as? [[String: Any]]
                #expect(
                    items?.count == 1 && items?.first?["badge"] as? Int == 2 && items?.first?["sequence"] as? Int == 7)
                let (noneStatus, none, _) = try await status(a, "u-nobody")
                #expect(
                    noneStatus == .ok && (none["badges"] as? [Any])?.isEmpty == true, "A and B hold both partitions")
            }
            // A alone: it holds one partition of two, so it cannot say.
            try await LiveServer.run(fixture.router(token: token, users: instanceA)) { a in
                let (alone, answer, retryAfter) = try await status(a, "u-b")
                #expect(alone == .serviceUnavailable && answer["error"] as? String == "owner-unavailable")
                #expect(retryAfter == "1")
            }
            // A with a peer that is restoring: partition 1 is held by no one that answered.
            try await LiveServer.run(fixture.router(token: token, users: restoring)) { c in
                let peerC = c.baseURL.replacingOccurrences(of: "http://", with: "")
                try await LiveServer.run(fixture.router(token: token, users: instanceA, peers: [peerC])) { a in
                    let (moving, answer, retryAfter) = try await status(a, "u-nobody")
                    #expect(moving == .serviceUnavailable && answer["error"] as? String == "owner-unavailable")
                    #expect(retryAfter == "1")
                }
            }
        }
        await fixture.shutdown()
    }

    @Test("a peer that takes the connection and never answers costs one timeout, not the answer")
    func silentPeer() async throws {
        let fixture = try await AdminFixture()
        // A listening socket that is never accepted from: the kernel completes the connection,
        // the request is sent, no answer ever comes (a stopped process looks the same).
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                try #require(bind(silent, raw, length) == 0 && listen(silent, 8) == 0)
                try #require(getsockname(silent, raw, &length) == 0)
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        let badge = Badge(appID: "chat", badge: 1, unread: 1, sequence: 1)
        try await LiveServer.run(fixture.router(users: InstanceAnswers(held: ["u-b": [badge]], partitions: [1]))) {
            b in
            let peers = [b.baseURL.replacingOccurrences(of: "http://", with: ""), "127.0.0.1:\(port)"]
            try await LiveServer.run(fixture.router(users: InstanceAnswers(partitions: [0]), peers: peers)) { a in
                let started = ContinuousClock.now
                try await a.execute(uri: "/v1/users/u-b/badges", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect((json(response.body)["badges"] as? [[String: Any]])?.first?["badge"] as? Int == 1)
                }
                let took = ContinuousClock.now - started
                #expect(took < .seconds(10), "the silent peer held the answer \(took)")
            }
        }
        await fixture.shutdown()
    }

    @Test("badges of a user")
    func badges() async throws {
        let fixture = try await AdminFixture()
        await fixture.users.add(userID: "u", appID: "chat", id: "n1")
        await fixture.users.add(userID: "u", appID: "chat", id: "n2")
        try await LiveServer.run(fixture.router()) { client in
            try await client.execute(uri: "/v1/users/u/badges", method: .get) { response in
                #expect(response.status == .ok)
                let badges = json(response.body)["badges"] as? [[String: Any]]
                #expect(badges?.first?["appId"] as? String == "chat")
                #expect(badges?.first?["badge"] as? Int == 2)
                #expect(badges?.first?["unread"] as? Int == 2)
            }
            try await client.execute(uri: "/v1/users/nobody/badges", method: .get) { response in
                #expect((json(response.body)["badges"] as? [Any])?.isEmpty == true)
            }
        }
        await fixture.shutdown()
    }

    @Test("status: focused or not by the stored context, until when, never the Focus's name")
    func status() async throws {
        let fixture = try await AdminFixture()
        try await LiveServer.run(fixture.router()) { client in
            try await client.execute(uri: "/v1/users/u-42/status", method: .get) { response in
                #expect(response.status == .ok)
                let body = json(response.body)
                #expect(body["focused"] as? Bool == false && body["contextVersion"] is NSNull)
            }
            try await client.execute(
                uri: "/v1/users/u-42/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: contextBody)
            ) { #expect($0.status == .ok) }
            try await client.execute(uri: "/v1/users/u-42/status", method: .get) { response in
                let body = json(response.body)
                #expect(body["userId"] as? String == "u-42" && body["focused"] as? Bool == true)
                #expect(body["contextVersion"] as? Int == 17 && body["focus"] == nil)
                #expect(body.keys.contains("until"))
            }
            let quiet = #"{"userId":"u-7","version":1,"focus":"Work","sharesStatus":false}"#
            try await client.execute(
                uri: "/v1/users/u-7/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: quiet)
            ) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/v1/users/u-7/status", method: .get) { response in
                #expect(json(response.body)["focused"] as? Bool == false, "a Focus that does not share its status")
            }
        }
        await fixture.shutdown()
    }

    @Test("explain with a given context, with the stored one, and refusals")
    func explain() async throws {
        let fixture = try await AdminFixture()
        let defaults = RateLimitPolicy(.init(perUser: .init(max: 5, windowSeconds: 3600)))
        try await LiveServer.run(fixture.router(rateLimits: defaults)) { client in
            let given =
                #"{"event":{"id":"n1","userId":"u-42","appId":"com.example.chat","filterCriteria":"home"},"context":"#
                + contextBody + "}"
            try await client.execute(
                uri: "/v1/explain", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: given)
            ) { response in
                #expect(response.status == .ok)
                let body = json(response.body)
                #expect(body["decision"] as? String == "silenced")
                #expect(body["reason"] as? String == "predicate-mismatch")
                #expect(body["focus"] as? String == "Work")
                #expect(body["contextVersion"] as? Int == 17)
                #expect(body["badgeCounted"] as? Bool == false)
                #expect(body["badgeUpdates"] as? String == "coalesced-per-commit")
            }
            let stored = #"{"event":{"id":"n1","userId":"u-42","appId":"com.example.chat","filterCriteria":"work"}}"#
            try await client.execute(
                uri: "/v1/explain", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: stored)
            ) { response in
                #expect(json(response.body)["reason"] as? String == "no-focus", "nothing stored yet")
            }
            try await client.execute(
                uri: "/v1/users/u-42/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: contextBody)
            ) { #expect($0.status == .ok) }
            try await client.execute(
                uri: "/v1/explain", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: stored)
            ) { response in
                #expect(json(response.body)["reason"] as? String == "predicate-match")
            }
            // Rate limits: the configured default (5 per user) for a context without its own.
            let limited =
                #"{"event":{"id":"n2","userId":"u-42","appId":"com.example.chat","filterCriteria":"work"},"recent":{"deliveredToUser":5}}"#
            try await client.execute(
                uri: "/v1/explain", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: limited)
            ) { response in
                let body = json(response.body)
                #expect(body["decision"] as? String == "silenced")
                #expect(body["reason"] as? String == "rate-limited")
                let rateLimit = body["rateLimit"] as? [String: Any]
                #expect(rateLimit?["scope"] as? String == "user" && rateLimit?["delivered"] as? Int == 5)
                #expect(rateLimit?["max"] as? Int == 5 && rateLimit?["windowSeconds"] as? Int == 3600)
                #expect(body["badgeCounted"] as? Bool == true, "a rate-limited notification still counts")
            }
            // At a given instant: a schedule's Focus, why, and its next transition.
            let scheduled =
                #"{"at":"2026-11-24T22:00:00Z","event":{"id":"n3","userId":"u-42","appId":"com.example.chat"},"context":{"userId":"u-42","version":18,"timeZone":"Europe/Paris","foci":{"Sleep":{"otherApps":"silence"}},"schedules":[{"focus":"Sleep","days":["tue"],"start":"22:00","end":"07:00"}]}}"#
            try await client.execute(
                uri: "/v1/explain", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: scheduled)
            ) {
                response in
                let body = json(response.body)
                #expect(body["reason"] as? String == "app-silenced" && body["focus"] as? String == "Sleep")
                let state = body["focusState"] as? [String: Any]
                #expect(state?["cause"] as? String == "schedule" && state?["focus"] as? String == "Sleep")
                #expect(state?["since"] as? String == "2026-11-24T21:00:00.000Z")
                #expect(state?["nextTransition"] as? String == "2026-11-25T06:00:00.000Z")
            }
            for (body, code) in [
                (#"{"event":{"id":"n1","userId":"u-42","appId":"a"},"at":"tomorrow"}"#, "wrong-type"),
                (#"{"event":{"id":"n1","userId":"u-42","appId":"a"},"recent":{"deliveredToUser":-1}}"#, "wrong-type"),
                (#"{"event":{"id":"n1","userId":"u-42","appId":"a"},"recent":[]}"#, "wrong-type"),
                ("[]", "invalid-json"),
                (#"{"context":{}}"#, "missing-field"),
                (#"{"event":{"id":"n1","appId":"a"}}"#, "missing-field"),
                (#"{"event":{"id":"n1","userId":"x","appId":"a"},"context":"# + contextBody + "}", "user-mismatch"),
            ] {
                try await client.execute(
                    uri: "/v1/explain", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: body)
                ) {
                    response in
                    #expect(response.status == .badRequest)
                    #expect(json(response.body)["error"] as? String == code, "\(body)")
                }
            }
        }
        await fixture.shutdown()
    }
}
