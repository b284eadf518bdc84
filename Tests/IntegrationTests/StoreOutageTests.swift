import FocusGate
import FocusGateHarness
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

extension EmbeddedBrokerTests {
    /// `focusgate serve` on PostgreSQL, with the store stopped under it: what needs the store
    /// fails, what the state in memory answers goes on, and the instance stays ready.
    @Suite("A store outage")
    struct StoreOutageTests {
        private static func request(
            _ url: String, method: String = "GET", body: String? = nil, token: String
        ) async throws -> (status: Int, body: String) {
            var request = URLRequest(url: URL(string: url)!)
            request.httpMethod = method
            request.httpBody = body.map { Data($0.utf8) }
            if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
            request.timeoutInterval = 10
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }

        @Test(
            "PostgreSQL stopped: badges, history and explain with a context answer 200, a context PUT 503 store-unavailable, /readyz stays 200 reporting the store; restarted: writes again"
        )
        func readSideStaysUp() async throws {
            let server = try PostgresServer.startPrivate()
            defer { server.destroy() }
            let database = "outage_\(UUID().uuidString.prefix(8).lowercased())"
            try server.psql("CREATE DATABASE \(database)")
            let bench = try await GatewayBench()
            let token = "outage-test-token-0123456789abcdef"
            let serve = try await ServeProcess(
                bench,
                environment: [
                    "FOCUSGATE_STORE_KIND": "postgres",
                    "FOCUSGATE_STORE_POSTGRES_URL": server.url(database: database),
                    "FOCUSGATE_ADMIN_TOKEN": token,
                    "FOCUSGATE_DELIVERY_MODE": "at-least-once",
                ])
            let admin = "http://127.0.0.1:\(serve.adminPort)"
            #expect(try await serve.waitUntilReady(timeout: .seconds(60)))
            #expect(try await serve.waitUntilAssigned(timeout: .seconds(60)))

            let context =
                #"{"userId":"u-1","version":1,"focus":"Work","apps":{"chat":{"filterPredicate":"SELF == 'work'"}}}"#
            #expect(
                try await Self.request("\(admin)/v1/users/u-1/context", method: "PUT", body: context, token: token)
                    .status == 200)
            try bench.send([
                Events.notification("n-1", user: "u-1", criteria: "work"),
                Events.notification("n-2", user: "u-1", criteria: "home"),
            ])
            try await serve.waitForConsumed(2)
            try await Wait.until("the user's badge committed", timeout: .seconds(30)) {
                (try? await Self.request("\(admin)/v1/users/u-1/badges", token: token))?.body.contains(#""badge":1"#)
                    == true
            }

            try server.stopServer()
            try await Wait.until("/readyz reporting the store unreachable", timeout: .seconds(30)) {
                let readiness = try? await Self.request("\(admin)/readyz", token: token)
                return readiness?.body.contains(#""store":false"#) == true
            }
            let readiness = try await Self.request("\(admin)/readyz", token: token)
            #expect(readiness.status == 200 && readiness.body.contains(#""ready":true"#), "\(readiness.body)")
            #expect(await serve.metric("focusgate_store_reachable") == 0)

            let badges = try await Self.request("\(admin)/v1/users/u-1/badges", token: token)
            #expect(badges.status == 200 && badges.body.contains(#""badge":1"#), "\(badges.body)")
            let history = try await Self.request("\(admin)/v1/users/u-1/notifications", token: token)
            #expect(
                history.status == 200 && history.body.contains(#""n-1""#) && history.body.contains(#""n-2""#),
                "\(history.body)")
            let item = try await Self.request("\(admin)/v1/users/u-1/notifications/n-2", token: token)
            #expect(item.status == 200 && item.body.contains(#""reason":"predicate-mismatch""#), "\(item.body)")
            let explained = try await Self.request(
                "\(admin)/v1/explain", method: "POST",
                body:
                    #"{"event":{"id":"n-3","userId":"u-1","appId":"chat","filterCriteria":"home"},"context":\#(context)}"#,
                token: token)
            #expect(explained.status == 200 && explained.body.contains(#""predicate-mismatch""#), "\(explained.body)")

            let newer = context.replacingOccurrences(of: #""version":1"#, with: #""version":2"#)
            let refused = try await Self.request(
                "\(admin)/v1/users/u-1/context", method: "PUT", body: newer, token: token)
            #expect(refused.status == 503 && refused.body.contains(#""store-unavailable""#), "\(refused.body)")

            try server.startServer()
            try await Wait.until("a context write accepted again", timeout: .seconds(60)) {
                (try? await Self.request("\(admin)/v1/users/u-1/context", method: "PUT", body: newer, token: token))?
                    .status == 200
            }
            try await Wait.until("/readyz reporting the store reachable", timeout: .seconds(30)) {
                (try? await Self.request("\(admin)/readyz", token: token))?.body.contains(#""store":true"#) == true
            }
            #expect(serve.isRunning, "no restart")
            #expect(await serve.stop(SIGTERM) == 0)
            await bench.shutdown()
        }
    }
}
