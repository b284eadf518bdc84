import FocusGate
import FocusGateCore
import Foundation
import HTTPTypes
import Hummingbird
import Testing

/// A user's recent decisions through the admin API, from the instance that holds the user or a peer.
extension AdminAPITests {
    @Test(
        "a user's recent decisions: newest first, paged and filtered; one by id, or 404 saying whether it was let go; from the peer that holds the user"
    )
    func history() async throws {
        let fixture = try await AdminFixture()
        var compiler = FocusContextCompiler()
        let work = try compiler.compile(
            FocusContext(userID: "u", version: 3, focus: "Work", apps: ["mail": .init(silenced: true)]))
        #expect(
            await fixture.users.decide(.init(id: "n-1", userID: "u", appID: "chat"), context: work, offset: 5)?.outcome
                == .delivered)
        #expect(
            await fixture.users.decide(.init(id: "n-2", userID: "u", appID: "mail"), context: work, offset: 6)?.outcome
                == .silenced)
        #expect(
            await fixture.users.decide(.init(id: "n-3", userID: "u", appID: "chat"), context: nil, offset: 7)?.reason
                == .noFocus)
        @Sendable func get(_ server: LiveServer, _ uri: String) async throws -> (HTTPResponse.Status, [String: Any]) {
            var answer: (HTTPResponse.Status, ByteBuffer) = (.internalServerError, ByteBuffer())
            try await server.execute(uri: uri, method: .get) { answer = ($0.status, $0.body) }
            return (answer.0, json(answer.1))
        }
        try await LiveServer.run(fixture.router()) { b in
            let (status, page) = try await get(b, "/v1/users/u/notifications?limit=2")
            #expect(status == .ok)
            let items = try #require(page["notifications"] as? [[String: Any]])
            #expect(items.map { $0["notificationId"] as? String } == ["n-3", "n-2"])
            let silenced = items[1]
            #expect(silenced["decision"] as? String == "silenced" && silenced["reason"] as? String == "app-silenced")
            #expect(silenced["focus"] as? String == "Work" && silenced["contextVersion"] as? Int == 3)
            #expect(silenced["appId"] as? String == "mail" && silenced["unread"] as? Bool == true)
            #expect(silenced["countedInBadge"] as? Bool == false && silenced["summarized"] as? Bool == false)
            #expect(silenced["decidedAt"] as? String == "1970-01-01T00:00:01.006Z")
            // Every key is there, null where the state does not know.
            #expect(items[0]["focus"] is NSNull && items[0]["contextVersion"] is NSNull)
            let cursor = try #require(page["nextCursor"] as? String)
            let (_, rest) = try await get(b, "/v1/users/u/notifications?limit=2&cursor=\(cursor)")
            #expect((rest["notifications"] as? [[String: Any]])?.map { $0["notificationId"] as? String } == ["n-1"])
            #expect(rest["nextCursor"] is NSNull)
            let (_, mail) = try await get(b, "/v1/users/u/notifications?appId=mail&decision=silenced")
            #expect((mail["notifications"] as? [[String: Any]])?.count == 1)
            let (_, delivered) = try await get(b, "/v1/users/u/notifications?decision=delivered")
            #expect(
                (delivered["notifications"] as? [[String: Any]])?.map { $0["notificationId"] as? String } == [
                    "n-3", "n-1",
                ])
            for bad in ["limit=0", "limit=1001", "limit=x", "cursor=-1", "decision=lost"] {
                let (badStatus, error) = try await get(b, "/v1/users/u/notifications?\(bad)")
                #expect(badStatus == .badRequest && error["error"] as? String == "invalid-value", "\(bad)")
            }
            let (one, item) = try await get(b, "/v1/users/u/notifications/n-2")
            #expect(one == .ok && item["reason"] as? String == "app-silenced")
            let (unknown, never) = try await get(b, "/v1/users/u/notifications/n-9")
            #expect(unknown == .notFound && never["error"] as? String == "notification-unknown")
            let (nobody, empty) = try await get(b, "/v1/users/nobody/notifications")
            #expect(nobody == .ok && (empty["notifications"] as? [Any])?.isEmpty == true)

            // A, which holds the other partition, asks B.
            let peerB = b.baseURL.replacingOccurrences(of: "http://", with: "")
            try await LiveServer.run(
                fixture.router(users: InstanceAnswers(partitions: [1], partitionCount: 2), peers: [peerB])
            ) { a in
                let (_, fromB) = try await get(a, "/v1/users/u/notifications?limit=2&decision=delivered")
                #expect(
                    (fromB["notifications"] as? [[String: Any]])?.map { $0["notificationId"] as? String } == [
                        "n-3", "n-1",
                    ])
                let (found, item) = try await get(a, "/v1/users/u/notifications/n-2")
                #expect(found == .ok && item["source"] is NSNull && item["reason"] as? String == "app-silenced")
                let (missing, error) = try await get(a, "/v1/users/u/notifications/n-9")
                #expect(missing == .notFound && error["error"] as? String == "notification-unknown")
            }
        }
        // Read and out of the window, a notification is let go: then the state cannot tell.
        await fixture.users.forget(userID: "u", id: "n-1")
        try await LiveServer.run(fixture.router()) { b in
            let (gone, error) = try await get(b, "/v1/users/u/notifications/n-1")
            #expect(gone == .notFound && error["error"] as? String == "notification-not-remembered")
        }
        await fixture.shutdown()
    }
}
