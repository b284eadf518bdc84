import FocusGateCore
import Foundation
import Testing

@Suite("Badge ledger (SPEC §7)")
struct BadgeLedgerTests {
    static let now: Int64 = 1_795_000_000_000

    static func context(
        version: Int64, focus: String? = "Work", predicate: String = "SELF IN {'work'}", hideBadges: Bool = false,
        expiresAt: Int64? = nil
    ) -> CompiledFocusContext {
        var compiler = FocusContextCompiler()
        return try! compiler.compile(
            FocusContext(
                userID: "u", version: version, focus: focus,
                expiresAt: expiresAt.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                hideBadges: hideBadges, apps: ["chat": .init(filterPredicate: predicate)]
            ))
    }

    private func add(
        _ ledger: inout BadgeLedger, _ id: String, _ criteria: String?, _ context: CompiledFocusContext?,
        app: String = "chat"
    ) -> BadgeUpdate? {
        guard
            case .added(let update) = ledger.recordNotification(
                userID: "u", appID: app, id: id, criteria: criteria, context: context, nowMilliseconds: Self.now)
        else {
            Issue.record("unexpected duplicate \(id)")
            return nil
        }
        return update
    }

    @Test("Focus on → Focus changes → Focus off → read → clear")
    func lifecycle() throws {
        var ledger = BadgeLedger()
        let work = Self.context(version: 1)

        let first = try #require(self.add(&ledger, "n1", "work", work))
        #expect(
            first.badge == 1 && first.unread == 1 && first.sequence == 1 && first.focus == "Work"
                && first.contextVersion == 1)
        #expect(
            self.add(&ledger, "n2", "home", work) == nil,
            "a silenced notification is unread but does not change the badge")
        #expect(ledger.badges(userID: "u") == [.init(appID: "chat", badge: 1, unread: 2, sequence: 1)])
        let third = try #require(self.add(&ledger, "n3", nil, work))
        #expect(third.badge == 2 && third.unread == 3 && third.sequence == 2, "no criteria: delivered, counted")

        // The Focus changes to one that delivers "home": recompute publishes the new badge.
        let personal = Self.context(version: 2, focus: "Personal", predicate: "SELF == 'home'")
        let changed = ledger.recompute(userID: "u", context: personal, nowMilliseconds: Self.now)
        #expect(changed.isEmpty, "n1 stops counting, n2 starts: the badge stays 2, nothing is published")
        #expect(ledger.badges(userID: "u").first?.badge == 2)

        // Focus off: everything unread counts.
        let off = ledger.recompute(
            userID: "u", context: Self.context(version: 3, focus: nil), nowMilliseconds: Self.now)
        #expect(off.map(\.badge) == [3])
        #expect(off.first?.focus == nil && off.first?.contextVersion == 3 && off.first?.sequence == 3)

        let readUpdate = ledger.markRead(
            userID: "u", appID: "chat", ids: ["n1", "unknown"], context: nil, nowMilliseconds: Self.now)
        let read = try #require(readUpdate)
        #expect(read.badge == 2 && read.unread == 2 && read.sequence == 4)

        let clearedUpdate = ledger.clear(userID: "u", appID: "chat", context: nil, nowMilliseconds: Self.now)
        let cleared = try #require(clearedUpdate)
        #expect(cleared.badge == 0 && cleared.unread == 0 && cleared.sequence == 5)
        #expect(
            ledger.clear(userID: "u", appID: "chat", context: nil, nowMilliseconds: Self.now) == nil,
            "no change, no update")
    }

    @Test("a changed Focus that changes the count publishes; an unchanged count publishes nothing")
    func recomputeOnlyChanged() throws {
        var ledger = BadgeLedger()
        let work = Self.context(version: 1)
        _ = self.add(&ledger, "n1", "work", work)
        _ = self.add(&ledger, "n2", "home", work)
        let sleep = Self.context(version: 2, focus: "Sleep", predicate: "FALSEPREDICATE")
        #expect(ledger.recompute(userID: "u", context: sleep, nowMilliseconds: Self.now).map(\.badge) == [0])
        #expect(ledger.recompute(userID: "u", context: sleep, nowMilliseconds: Self.now).isEmpty)
        #expect(ledger.recompute(userID: "nobody", context: sleep, nowMilliseconds: Self.now).isEmpty)
    }

    @Test("hideBadges counts nothing; an expired context counts everything")
    func hideAndExpiry() throws {
        var ledger = BadgeLedger()
        let hidden = Self.context(version: 1, hideBadges: true)
        #expect(self.add(&ledger, "n1", "work", hidden) == nil)
        let expiring = Self.context(version: 2, expiresAt: Self.now + 1000)
        #expect(ledger.recompute(userID: "u", context: expiring, nowMilliseconds: Self.now).map(\.badge) == [1])
        _ = self.add(&ledger, "n2", "home", expiring)
        #expect(ledger.badges(userID: "u").first?.badge == 1)
        // After expiry the same context version counts every unread notification.
        let later = ledger.recompute(userID: "u", context: expiring, nowMilliseconds: Self.now + 1001)
        #expect(later.map(\.badge) == [2] && later.first?.focus == nil)
    }

    @Test("duplicate ids are refused; apps are independent")
    func duplicates() {
        var ledger = BadgeLedger()
        _ = self.add(&ledger, "n1", "work", nil)
        #expect(
            ledger.recordNotification(
                userID: "u", appID: "chat", id: "n1", criteria: "work", context: nil, nowMilliseconds: Self.now)
                == .duplicate)
        #expect(self.add(&ledger, "n1", "work", nil, app: "mail")?.badge == 1)
        #expect(ledger.badges(userID: "u").map(\.appID) == ["chat", "mail"])
    }

    @Test("unread per app is capped: the oldest are dropped and counted")
    func cap() {
        var ledger = BadgeLedger(maxUnreadPerApp: 3)
        for index in 0..<5 { _ = self.add(&ledger, "n\(index)", nil, nil) }
        #expect(ledger.badges(userID: "u").first?.unread == 3)
        #expect(ledger.badges(userID: "u").first?.badge == 3)
        #expect(ledger.droppedUnread == 2)
        // The dropped ones are gone: reading them changes nothing.
        #expect(
            ledger.markRead(userID: "u", appID: "chat", ids: ["n0", "n1"], context: nil, nowMilliseconds: Self.now)
                == nil)
    }

    @Test("the compact state round-trips and badges continue from it")
    func serialization() throws {
        var ledger = BadgeLedger()
        let work = Self.context(version: 1)
        _ = self.add(&ledger, "n1", "work", work)
        _ = self.add(&ledger, "n2", "hömé", work)
        _ = self.add(&ledger, "n3", nil, work)
        _ = self.add(&ledger, "m1", "", work, app: "mail")
        let bytes = try #require(ledger.serializedState(userID: "u"))
        #expect(bytes.count < 64)

        var restored = BadgeLedger()
        try restored.restore(userID: "u", from: bytes)
        #expect(restored.badges(userID: "u") == ledger.badges(userID: "u"))
        #expect(restored.serializedState(userID: "u") == bytes)
        // Sequences continue after a restore.
        let nextUpdate = restored.markRead(
            userID: "u", appID: "chat", ids: ["n1"], context: work, nowMilliseconds: Self.now)
        let next = try #require(nextUpdate)
        #expect(next.sequence == 3 && next.badge == 1)
        #expect(ledger.serializedState(userID: "nobody") == nil)
    }

    @Test(
        "corrupt state is refused and leaves the ledger unchanged",
        arguments: [[], [9], [1, 1], [1, 1, 200], [1, 0, 0]] as [[UInt8]])
    func corruptState(bytes: [UInt8]) {
        var ledger = BadgeLedger()
        _ = self.add(&ledger, "n1", nil, nil)
        #expect(throws: BadgeStateError.self) { try ledger.restore(userID: "u", from: bytes) }
        #expect(ledger.badges(userID: "u").first?.unread == 1)
    }

    @Test("badge records: key and JSON value")
    func record() throws {
        let update = BadgeUpdate(
            userID: "u-\"42", appID: "com.example.chat", badge: 2, unread: 5, focus: "Work", contextVersion: 17,
            sequence: 9, updatedAtMilliseconds: 1_795_284_000_123)
        #expect(update.key == "u-\"42/com.example.chat")
        let object = try #require(JSONSerialization.jsonObject(with: Data(update.jsonBytes)) as? [String: Any])
        #expect(object["userId"] as? String == "u-\"42")
        #expect(object["badge"] as? Int == 2 && object["unread"] as? Int == 5 && object["sequence"] as? Int == 9)
        #expect(object["contextVersion"] as? Int == 17 && object["focus"] as? String == "Work")
        #expect(object["updatedAt"] as? String == "2026-11-21T18:00:00.123Z")
        let off = BadgeUpdate(
            userID: "u", appID: "a", badge: 0, unread: 0, focus: nil, contextVersion: nil, sequence: 1,
            updatedAtMilliseconds: 0)
        #expect(String(decoding: off.jsonBytes, as: UTF8.self).contains(#""focus":null,"contextVersion":null"#))
    }

    @Test(
        "badge JSON escapes what must be escaped and writes every integer exactly",
        arguments: [
            Int64(0), 7, 10, 999, 1_000_000_007, -42, Int64.max, Int64.min, 9_999_999_999_999_999,
            10_000_000_000_000_000,
        ])
    func jsonValues(version: Int64) throws {
        let update = BadgeUpdate(
            userID: "u-\"quoted\"\n\\", appID: "app\u{01}é", badge: 3, unread: 4, focus: "Wörk \t",
            contextVersion: version,
            sequence: UInt64(Int64.max), updatedAtMilliseconds: 1_795_284_000_123
        )
        let object = try #require(JSONSerialization.jsonObject(with: Data(update.jsonBytes)) as? [String: Any])
        #expect(
            object["userId"] as? String == "u-\"quoted\"\n\\" && object["appId"] as? String == "app\u{01}é"
                && object["focus"] as? String == "Wörk \t")
        #expect(String(decoding: update.jsonBytes, as: UTF8.self).contains(#""contextVersion":\#(version),"#))
        #expect(object["sequence"] as? Int == Int.max)
    }

    @Test(
        "RFC 3339 timestamps",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00.000Z"), (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"), (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
        ])
    func timestamps(milliseconds: Int64, text: String) {
        #expect(Timestamp.rfc3339(milliseconds: milliseconds) == text)
        #expect(Timestamp.parseRFC3339(text) == milliseconds)
    }

    @Test("RFC 3339 parsing: offsets, fractions, refusals")
    func timestampParsing() {
        #expect(Timestamp.parseRFC3339("2026-11-21T18:00:00Z") == 1_795_284_000_000)
        #expect(Timestamp.parseRFC3339("2026-11-21T19:30:00+01:30") == 1_795_284_000_000)
        #expect(Timestamp.parseRFC3339("2026-11-21T18:00:00.5Z") == 1_795_284_000_500)
        #expect(Timestamp.parseRFC3339("2026-11-21T18:00:00.123456Z") == 1_795_284_000_123)
        for bad in [
            "2026-11-21", "2026-11-21T18:00:00", "2026-13-01T00:00:00Z", "tomorrow", "2026-11-21T18:00:00.Z",
            "2026-11-21T18:00:00Zx",
        ] {
            #expect(Timestamp.parseRFC3339(bad) == nil, "\(bad)")
        }
    }
}
