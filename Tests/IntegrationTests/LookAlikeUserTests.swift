import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

extension GatewayScenarioTests {
    /// Users whose ids are canonically equivalent but differ in bytes (as Kafka keys and the store
    /// tell them apart) are decided, counted and remembered apart by the gateway.
    @Suite("Look-alike user ids")
    struct LookAlikeUserEndToEndTests {
        /// (real, look-alike): NFC and NFD `café`; `Kata0` and the same with a Kelvin sign.
        static let cafe = ("caf\u{E9}", "cafe\u{301}")
        static let kata = ("Kata0", "\u{212A}ata0")

        /// The (decision, reason, focus header) of the output for `user`'s notification `id`, the
        /// user told by the record key's bytes.
        static func said(_ audit: Audit, user: String, id: String) -> [String] {
            (audit.delivered + audit.silenced).filter {
                $0.key == Array(user.utf8) && Audit.id(of: $0) == id
            }.map {
                [$0.header("focusgate-decision"), $0.header("focusgate-reason"), $0.header("focusgate-focus")]
                    .map { $0 ?? "-" }.joined(separator: " ")
            }
        }

        @Test("own contexts, badges, history and dedupe for NFC/NFD and Kelvin-sign look-alikes")
        func apart() async throws {
            let bench = try await GatewayBench()
            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            try await instance.waitUntil(
                { instance.gateway.isConsuming }, timeout: .seconds(60), what: "the gateway consuming")
            // The real users' Focus silences every app; the look-alikes have no context.
            for real in [Self.cafe.0, Self.kata.0] {
                try await bench.put(FocusContext.fixture(real, version: 2, otherApps: .silence, apps: [:]))
            }
            // café: the look-alike first (its "no context" must not answer for the real user);
            // Kata0: the real user first (its Focus must not answer for the look-alike). The same
            // notification ids for both: one's must not dedupe the other's.
            let records = [
                Events.notification("n-1", user: Self.cafe.1, criteria: "work"),
                Events.notification("n-1", user: Self.cafe.0, criteria: "work"),
                Events.notification("n-1", user: Self.kata.0, criteria: "work"),
                Events.notification("n-1", user: Self.kata.1, criteria: "work"),
                Events.notification("n-2", user: Self.kata.1, criteria: "work"),
                Events.clear("c-1", user: Self.kata.1),
            ]
            try bench.send(records)
            let audit = try await bench.settled(records: records.count) { instance.recentLog.text }
            #expect(audit.deadLetters.isEmpty, "\(audit.deadLetters.map { $0.header("focusgate-error") ?? "" })")
            for real in [Self.cafe.0, Self.kata.0] {
                #expect(Self.said(audit, user: real, id: "n-1") == ["silenced app-silenced Work"], "\(real)")
            }
            for lookAlike in [Self.cafe.1, Self.kata.1] {
                #expect(
                    Self.said(audit, user: lookAlike, id: "n-1") == ["delivered no-focus -"],
                    "\(Array(lookAlike.utf8))")
            }
            #expect(Self.said(audit, user: Self.kata.1, id: "n-2") == ["delivered no-focus -"])

            // Badges: the real users' unread stays after the Kelvin look-alike's clear.
            let directory = instance.gateway.directory
            #expect(await directory.held(userID: Self.cafe.0).map(\.unread) == [1])
            #expect(await directory.held(userID: Self.cafe.0).map(\.badge) == [0])
            #expect(await directory.held(userID: Self.cafe.1).map(\.badge) == [1])
            #expect(await directory.held(userID: Self.kata.0).map(\.unread) == [1])
            #expect(await directory.held(userID: Self.kata.1).map(\.unread) == [0])
            let badgeKeys = Set(audit.badges.compactMap(\.key))
            #expect(badgeKeys.contains(Array("\(Self.cafe.1)/chat".utf8)))
            #expect(!badgeKeys.contains(Array("\(Self.cafe.0)/chat".utf8)), "a silenced badge stays 0: none published")

            // History: each user's own notifications, decided under their own context.
            for (user, expected) in [
                (Self.cafe.0, ["n-1 app-silenced"]), (Self.cafe.1, ["n-1 no-focus"]),
                (Self.kata.0, ["n-1 app-silenced"]), (Self.kata.1, ["n-2 no-focus", "n-1 no-focus"]),
            ] {
                guard case .held(let page) = await directory.history(userID: user, query: HistoryQuery(limit: 10))
                else {
                    Issue.record("no history held for \(Array(user.utf8))")
                    continue
                }
                #expect(
                    page.items.map { "\($0.notificationID ?? "?") \($0.reason?.rawValue ?? "?")" } == expected,
                    "\(Array(user.utf8))")
            }
            #expect(instance.metric("focusgate_duplicates_total") == 0)
            try await instance.stop()
            await bench.shutdown()
        }
    }
}
