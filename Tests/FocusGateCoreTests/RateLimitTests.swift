@testable import FocusGateCore
import Foundation
import Testing

@Suite("Rate limits: windows by record timestamps, exemptions, state, changelog")
struct RateLimitTests {
    static let start: Int64 = 1_800_000_000_000
    static let minute: Int64 = 60_000

    static func context(_ limits: FocusContext.RateLimits?, people: FocusContext.People? = nil, focus: String? = nil)
        -> CompiledFocusContext
    {
        var compiler = FocusContextCompiler()
        return try! compiler.compile(
            FocusContext(userID: "u", version: 1, focus: focus, people: people, rateLimits: limits))
    }

    static func notification(
        _ id: String, app: String = "chat", level: InterruptionLevel = .active, sender: String? = nil
    ) -> NotificationEvent {
        .fixture(id, app: app, level: level, sender: sender)
    }

    /// Decides one notification sent at `sentAt` as the record loop does; returns its reason.
    static func decide(
        _ state: inout PartitionState, _ event: NotificationEvent, _ context: CompiledFocusContext?, sentAt: Int64,
        defaults: RateLimitPolicy = .none
    ) -> String {
        let (decision, admission) = state.decide(
            event, lookup: .available(context), defaultRateLimits: defaults, repeatedWindowMilliseconds: 180_000,
            nowMilliseconds: sentAt, sentAtMilliseconds: sentAt)
        return admission == .duplicate ? "duplicate" : decision?.reason.rawValue ?? "none"
    }

    // MARK: - The window

    @Test("a window counts deliveries for between 11/12 of its length and all of it, by slot")
    func window() {
        var window = RateWindow(user: 0, appHash: 0)
        let hour: Int64 = 3_600_000
        let slot = hour / 12
        let base = (Self.start / slot) * slot  // the start of a slot
        window.record(at: base, windowMilliseconds: hour)
        window.record(at: base + slot - 1, windowMilliseconds: hour)
        #expect(window.count(at: base + slot - 1, windowMilliseconds: hour) == 2)
        #expect(window.count(at: base + 11 * slot, windowMilliseconds: hour) == 2, "11 slots later: both count")
        #expect(window.count(at: base + 12 * slot, windowMilliseconds: hour) == 0, "12 slots later: neither")
        #expect(window.count(at: base, windowMilliseconds: 2 * hour) == 0, "another window length starts over")
        // A late record is judged by the window as it is now, and counted in its oldest slot.
        window.record(at: base + 11 * slot, windowMilliseconds: hour)
        #expect(window.count(at: base - 5 * hour, windowMilliseconds: hour) == 3)
        window.record(at: base - 5 * hour, windowMilliseconds: hour)
        #expect(window.count(at: base + 11 * slot, windowMilliseconds: hour) == 4)
        #expect(window.count(at: base + 12 * slot, windowMilliseconds: hour) == 1, "only the newest slot is left")
    }

    // MARK: - Decisions

    /// `decision` with the cap applied that silences it, if any, as the one decision path does.
    static func limit(
        _ decision: Decision, interruptionLevel: InterruptionLevel, senderList: PersonList?, policy: RateLimitPolicy,
        delivered: RateCounts
    ) -> Decision {
        var limited = decision
        if let hit = FocusDecider.rateLimitHit(
            decision, interruptionLevel: interruptionLevel, senderList: senderList, policy: policy, delivered: delivered
        ) {
            limited.silence(by: hit)
        }
        return limited
    }

    @Test(
        "exemptions: critical, time-sensitive and allowed or repeated senders get through a full window unless the limits say otherwise",
        arguments: [true, false])
    func exemptions(exemptAll: Bool) {
        let limits = RateLimitPolicy(
            .init(
                perUser: .init(max: 1, windowSeconds: 60),
                exempt: exemptAll ? FocusContext.RateLimits.Exemption.allCases : []))
        let full = RateCounts(user: 1, app: 0)
        let delivered = Decision(outcome: .delivered, reason: .noFocus)
        func limited(_ decision: Decision, _ level: InterruptionLevel, _ list: PersonList?) -> Bool {
            Self.limit(decision, interruptionLevel: level, senderList: list, policy: limits, delivered: full)
                .reason == .rateLimited
        }
        #expect(limited(delivered, .active, nil))
        #expect(limited(delivered, .passive, .silenced))
        #expect(limited(delivered, .critical, nil) != exemptAll)
        #expect(limited(delivered, .timeSensitive, nil) != exemptAll)
        #expect(limited(delivered, .active, .allowed) != exemptAll)
        #expect(limited(Decision(outcome: .delivered, reason: .repeatedSender), .active, nil) != exemptAll)
        let silenced = Decision(outcome: .silenced, reason: .appSilenced)
        #expect(
            Self.limit(silenced, interruptionLevel: .active, senderList: nil, policy: limits, delivered: full)
                == silenced, "a silenced notification stays as it was")
        let underCap = Self.limit(
            delivered, interruptionLevel: .active, senderList: nil, policy: limits, delivered: RateCounts())
        #expect(underCap == delivered)
    }

    @Test("the user's cap, then the app's, each named with its count")
    func capsNamed() {
        let limits = RateLimitPolicy(
            .init(perUser: .init(max: 10, windowSeconds: 3600), perApp: .init(max: 3, windowSeconds: 600)))
        let delivered = Decision(outcome: .delivered, reason: .predicateMatch, focus: "Work", contextVersion: 4)
        let byUser = Self.limit(
            delivered, interruptionLevel: .active, senderList: nil, policy: limits, delivered: .init(user: 10, app: 3))
        #expect(byUser.outcome == .silenced && byUser.reason == .rateLimited)
        #expect(byUser.rateLimit == RateLimitHit(scope: .user, max: 10, windowSeconds: 3600, delivered: 10))
        #expect(byUser.focus == "Work" && byUser.contextVersion == 4)
        let byApp = Self.limit(
            delivered, interruptionLevel: .active, senderList: nil, policy: limits, delivered: .init(user: 9, app: 3))
        #expect(byApp.rateLimit == RateLimitHit(scope: .app, max: 3, windowSeconds: 600, delivered: 3))
    }

    // MARK: - With the state

    @Test(
        "per user: the cap's worth of deliveries, then rate-limited until the window moves on; silenced ones do not count"
    )
    func perUser() {
        var state = PartitionState()
        let context = Self.context(.init(perUser: .init(max: 3, windowSeconds: 60)))
        var reasons: [String] = []
        for index in 0..<5 {
            reasons.append(
                Self.decide(&state, Self.notification("n\(index)"), context, sentAt: Self.start + Int64(index) * 1000))
        }
        #expect(reasons == ["no-focus", "no-focus", "no-focus", "rate-limited", "rate-limited"])
        #expect(
            Self.decide(&state, Self.notification("n2"), context, sentAt: Self.start + 6000) == "duplicate",
            "a duplicate is neither decided nor counted")
        #expect(
            Self.decide(&state, Self.notification("late"), context, sentAt: Self.start + 2 * Self.minute) == "no-focus",
            "two minutes later the window is free again")
        #expect(
            state.delivered(
                userID: "u", appID: "chat", policy: context.rateLimits!, atMilliseconds: Self.start + 2 * Self.minute)
                == RateCounts(user: 1, app: 0))
    }

    @Test("per app: each app has its own window; the configured default applies to a context without limits")
    func perAppAndDefault() {
        var state = PartitionState()
        let defaults = RateLimitPolicy(.init(perApp: .init(max: 2, windowSeconds: 600)))
        var reasons: [String: [String]] = [:]
        for index in 0..<6 {
            let app = index % 2 == 0 ? "chat" : "mail"
            reasons[app, default: []].append(
                Self.decide(
                    &state, Self.notification("n\(index)", app: app), nil, sentAt: Self.start + Int64(index),
                    defaults: defaults))
        }
        #expect(reasons["chat"] == ["no-focus", "no-focus", "rate-limited"])
        #expect(reasons["mail"] == ["no-focus", "no-focus", "rate-limited"])
        let off = Self.context(.init())
        #expect(
            Self.decide(&state, Self.notification("n9"), off, sentAt: Self.start + 10, defaults: defaults)
                == "no-focus",
            "a context's own rateLimits ({}) replace the default")
    }

    @Test("a user with more apps than the state keeps windows for: the stalest app window is taken over")
    func boundedAppWindows() {
        var state = PartitionState()
        let defaults = RateLimitPolicy(
            .init(perUser: .init(max: 10_000, windowSeconds: 60), perApp: .init(max: 1, windowSeconds: 60)))
        for app in 0..<(RateWindow.maxAppWindows + 8) {
            _ = Self.decide(
                &state, Self.notification("n\(app)", app: "app-\(app)"), nil, sentAt: Self.start + Int64(app),
                defaults: defaults)
        }
        #expect(state.userRecords.rateWindows.windows.count == 1 + RateWindow.maxAppWindows)
        let newest = "app-\(RateWindow.maxAppWindows + 7)"
        #expect(
            Self.decide(
                &state, Self.notification("again", app: newest), nil, sentAt: Self.start + 100, defaults: defaults)
                == "rate-limited", "the newest apps keep their windows")
    }

    @Test("rollback puts the windows back; the changelog restores them, and a restored state rolls back too")
    func rollbackAndRestore() throws {
        var state = PartitionState()
        let context = Self.context(
            .init(perUser: .init(max: 2, windowSeconds: 3600), perApp: .init(max: 5, windowSeconds: 3600)),
            people: .init(allowRepeated: true), focus: "Work")
        _ = Self.decide(&state, Self.notification("n1", sender: "mom"), context, sentAt: Self.start)
        state.commit()
        _ = Self.decide(&state, Self.notification("n2", sender: "mom"), context, sentAt: Self.start + 1)
        state.rollback()
        let counts = { (state: PartitionState) in
            state.delivered(userID: "u", appID: "chat", policy: context.rateLimits!, atMilliseconds: Self.start + 2)
        }
        #expect(counts(state) == RateCounts(user: 1, app: 1))

        _ = Self.decide(&state, Self.notification("n2", sender: "mom"), context, sentAt: Self.start + 1)
        var log: [([UInt8], [UInt8]?)] = []
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
        let record = try #require(log.first { $0.0.starts(with: [0, UInt8(ascii: "R")]) })
        #expect((record.1?.count ?? 0) <= 2 * 17, "two windows of one slot, 17 bytes each: \(record.1?.count ?? 0)")

        var restored = PartitionState()
        for (key, value) in log { try restored.restore(key: key, value: value) }
        restored.finishRestore()
        #expect(counts(restored) == RateCounts(user: 2, app: 2))
        // Changes after a restore roll back to the restored state, windows and senders alike.
        #expect(
            Self.decide(&restored, Self.notification("n3", sender: "dad"), context, sentAt: Self.start + 3)
                == "rate-limited")
        restored.rollback()
        #expect(counts(restored) == RateCounts(user: 2, app: 2))
        #expect(
            restored.isRepeatedSender(
                userID: "u", senderID: "mom", atMilliseconds: Self.start + 5, windowMilliseconds: 180_000))
        #expect(
            !restored.isRepeatedSender(
                userID: "u", senderID: "dad", atMilliseconds: Self.start + 5, windowMilliseconds: 180_000))
    }

    // MARK: - The document

    @Test("rateLimits in a context: decoded, encoded, validated with the field named")
    func document() throws {
        let json = """
            {"userId":"u","version":1,"rateLimits":{"perUser":{"max":20,"windowSeconds":3600},"exempt":["critical"]}}
            """
        let context = try FocusContext.decode(from: Data(json.utf8))
        #expect(context.rateLimits == .init(perUser: .init(max: 20, windowSeconds: 3600), exempt: [.critical]))
        #expect(try FocusContext.decode(from: context.encoded()) == context)
        let defaults = try FocusContext.decode(from: Data(#"{"userId":"u","version":1,"rateLimits":{}}"#.utf8))
        #expect(defaults.rateLimits?.exempt == FocusContext.RateLimits.Exemption.allCases)
        for (document, field) in [
            (#"{"perUser":{"max":0,"windowSeconds":60}}"#, "rateLimits.perUser.max"),
            (#"{"perApp":{"max":5,"windowSeconds":604801}}"#, "rateLimits.perApp.windowSeconds"),
            (#"{"perUser":{"max":5}}"#, "rateLimits.perUser.windowSeconds"),
            (#"{"exempt":["everything"]}"#, "rateLimits.exempt"),
        ] {
            let error = #expect(throws: FocusContextError.self) {
                try FocusContext.decode(from: Data(#"{"userId":"u","version":1,"rateLimits":\#(document)}"#.utf8))
            }
            #expect(error?.field?.hasPrefix(field) == true, "\(document): \(String(describing: error))")
        }
    }
}

extension RateLimitTests {
    @Test("the changelog's hashes are 64-bit FNV-1a of the UTF-8 bytes, as before the fast path")
    func stableHashes() {
        #expect(PartitionState.idHash("a") == 0xaf63_dc4c_8601_ec8c, "the published FNV-1a test vector")
        #expect(PartitionState.idHash("") == 0xcbf2_9ce4_8422_2325)
        let text = "école-\(42)"
        var expected: UInt64 = 0x84_2222_325c_bf29
        for byte in Array(text.utf8) { expected = (expected ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        #expect(PartitionState.senderHash(text) == expected)
        #expect(PartitionState.appHash("com.example.chat") != 0)
    }
}

extension RateLimitTests {
    @Test("each reason's index is its place in Reason.all (metric slots), and reasons compare by it")
    func reasonIndexes() {
        #expect(Decision.Reason.all.enumerated().allSatisfy { $0.offset == $0.element.index })
        #expect(Set(Decision.Reason.all.map(\.rawValue)).count == Decision.Reason.all.count)
        #expect(Decision.Reason.rateLimited != .repeatedSender && Decision.Reason.all.last == .rateLimited)
    }
}

extension RateLimitTests {
    @Test("an R changelog record keeps its byte form: app hash, slot width, newest slot, slot bitmask, counts")
    func rateRecordBytes() throws {
        let context = Self.context(
            .init(perUser: .init(max: 5, windowSeconds: 12), perApp: .init(max: 5, windowSeconds: 120)))
        var state = PartitionState()
        for (number, offset) in [Int64(0), 1, 1_000].enumerated() {
            #expect(
                Self.decide(&state, Self.notification("n\(number)"), context, sentAt: Self.start + offset) == "no-focus"
            )
        }
        var log: [([UInt8], [UInt8]?)] = []
        state.writeChanges { key, value in log.append((key, value)) }
        let record = try #require(log.first { $0.0 == [0, UInt8(ascii: "R")] + Array("u".utf8) })
        // Worked out by hand from docs/state.md: the user's window (hash 0, 1,000 ms slots, two
        // deliveries in slot 1,800,000,000 and one in the next), then the app's (FNV-1a of
        // "chat", 10,000 ms slots, three deliveries in one slot).
        let expected: [UInt8] = [
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE8, 0x07, 0x81, 0xA4, 0xA7, 0xDA, 0x06, 0x03, 0x02, 0x01,
            0x91, 0xEE, 0xD6, 0x7A, 0x3F, 0x6C, 0x36, 0xBA, 0x90, 0x4E, 0x80, 0xAA, 0xEA, 0x55, 0x01, 0x03,
        ]
        #expect(record.1 == expected)
    }
}
