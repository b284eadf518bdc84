@testable import FocusGateCore
import FocusGateHarness
import FocusGateTestSupport
import Testing

/// `PartitionState.decide` against a plain model of the state it decides with (docs/contract.md,
/// Decisions and Rate limits): each user's recent senders as a dictionary, deliveries per window
/// as arrays of slots. Random notifications (duplicates, critical ones, records arriving late),
/// commits and rollbacks; then restored from the changelog, as written and as compaction would
/// leave it, and continued.
@Suite("Decisions with state against a model: repeated senders and rate limits")
struct DecisionStateModelTests {
    static let now = BadgeRecordTests.now
    static let repeatedWindow: Int64 = 180_000
    static let context = FocusContext.fixture(
        focus: "Work", apps: ["b": .init(silenced: true)],
        people: .init(allowed: ["boss"], silenced: ["spam"], allowRepeated: true),
        rateLimits: .init(
            perUser: .init(max: 3, windowSeconds: 60), perApp: .init(max: 2, windowSeconds: 30), exempt: [.critical])
    ).compiledForTests()
    static let policy = Self.context.rateLimits!

    /// What `decide` needs of the state, written the obvious way.
    struct Model {
        var badges = PartitionStateModelTests.Model(window: 4, cap: 3)
        /// Per user, each sender's latest record timestamp; at most four, the oldest giving way.
        var senders: [String: [String: Int64]] = [:]
        /// Per window key (`user` or `user/app`), its newest slot and each delivery's slot.
        var windows: [String: (newest: Int64, slots: [Int64])] = [:]

        func isRepeated(user: String, sender: String?, at time: Int64) -> Bool {
            guard let sender, let last = self.senders[user]?[sender] else { return false }
            return abs(time - last) <= DecisionStateModelTests.repeatedWindow
        }

        mutating func note(user: String, sender: String, at time: Int64) {
            var recent = self.senders[user, default: [:]]
            if recent[sender] == nil && recent.count == SenderRing.capacity {
                recent[recent.min { $0.value < $1.value }!.key] = nil
            }
            recent[sender] = max(recent[sender] ?? .min, time)
            self.senders[user] = recent
        }

        func count(_ key: String, at time: Int64, cap: RateLimitPolicy.Cap) -> Int {
            guard let window = self.windows[key] else { return 0 }
            let top = max(time / RateWindow.width(ofWindow: cap.windowMilliseconds), window.newest)
            return window.slots.filter { $0 > top - Int64(RateWindow.slots) }.count
        }

        /// A delivery counts in the slot of its time, or the window's oldest when it came late.
        mutating func record(_ key: String, at time: Int64, cap: RateLimitPolicy.Cap) {
            let slot = time / RateWindow.width(ofWindow: cap.windowMilliseconds)
            var window = self.windows[key] ?? (newest: slot, slots: [])
            window.newest = max(window.newest, slot)
            window.slots = window.slots.filter { $0 > window.newest - Int64(RateWindow.slots) }
            window.slots.append(max(slot, window.newest - Int64(RateWindow.slots) + 1))
            self.windows[key] = window
        }

        mutating func decide(_ event: NotificationEvent, at time: Int64) -> String {
            let context = DecisionStateModelTests.context
            if self.badges.isDuplicate(user: event.userID, id: event.id) { return "duplicate" }
            let policy = DecisionStateModelTests.policy
            let appKey = "\(event.userID)/\(event.appID)"
            let decision = FocusDecider.decide(
                event, lookup: .available(context), nowMilliseconds: DecisionStateModelTests.now,
                repeatedSender: { self.isRepeated(user: event.userID, sender: event.senderID, at: time) },
                delivered: { _ in
                    RateCounts(
                        user: self.count(event.userID, at: time, cap: policy.perUser!),
                        app: self.count(appKey, at: time, cap: policy.perApp!))
                }
            ).decision
            if let sender = event.senderID { self.note(user: event.userID, sender: sender, at: time) }
            if decision.outcome == .delivered {
                self.record(event.userID, at: time, cap: policy.perUser!)
                self.record(appKey, at: time, cap: policy.perApp!)
            }
            _ = self.badges.admit(event, context: context)
            return decision.reason.rawValue
        }
    }

    static func event(_ random: inout SeededGenerator) -> NotificationEvent {
        NotificationEvent(
            id: "n\(Int.random(in: 0..<40, using: &random))",
            userID: ["u0", "u1", "u2"].randomElement(using: &random)!,
            appID: ["a", "b", "c"].randomElement(using: &random)!, filterCriteria: "work",
            interruptionLevel: Int.random(in: 0..<10, using: &random) == 0 ? .critical : .active,
            senderID: [nil, "boss", "spam", "mom", "dad", "friend", "sis"].randomElement(using: &random)!)
    }

    /// Record timestamps that mostly advance by up to 8 s and sometimes come up to 40 s late,
    /// never twice the same (a tie would leave the oldest sender to give way undefined).
    struct Clock {
        var latest: Int64 = 1_800_000_000_000
        var used: Set<Int64> = []

        mutating func next(_ random: inout SeededGenerator) -> Int64 {
            while true {
                let time =
                    Int.random(in: 0..<10, using: &random) == 0
                    ? self.latest - Int64.random(in: 1..<40_000, using: &random)
                    : self.latest + Int64.random(in: 1..<8_000, using: &random)
                if self.used.insert(time).inserted {
                    self.latest = max(self.latest, time)
                    return time
                }
            }
        }
    }

    static func decide(_ state: inout PartitionState, _ event: NotificationEvent, at time: Int64) -> String {
        let (decision, admission) = state.decide(
            event, lookup: .available(Self.context), defaultRateLimits: .none,
            repeatedWindowMilliseconds: Self.repeatedWindow, nowMilliseconds: Self.now, sentAtMilliseconds: time)
        return admission == .duplicate ? "duplicate" : decision?.reason.rawValue ?? "none"
    }

    @Test(
        "same decisions as the model through commits and rollbacks, and after restores", .computeThread,
        arguments: 1...12)
    func againstModel(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        var clock = Clock()
        var state = PartitionState(maxUnreadPerApp: 3, dedupeWindow: 4)
        var model = Model()
        var committed = model
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        var reasons: Set<String> = []

        for step in 0..<3_000 {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<88:
                let event = Self.event(&random)
                let time = clock.next(&random)
                let expected = model.decide(event, at: time)
                try #require(Self.decide(&state, event, at: time) == expected, "step \(step): \(event) at \(time)")
                reasons.insert(expected)
            case 88..<96:
                state.writeChanges { key, value in log.append((key, value)) }
                state.commit()
                model.badges.pending = []
                committed = model
            default:
                state.rollback()
                model = committed
            }
            try #require(state.table.count == state.entryCount, "step \(step): the entry table's count")
            try #require(state.table.violations(keys: state.entries.elements).isEmpty, "step \(step): the entry table")
            try #require(state.partViolations.isEmpty, "step \(step): \(state.partViolations)")
        }
        #expect(
            reasons.isSuperset(of: ["rate-limited", "repeated-sender", "person-allowed", "app-silenced", "duplicate"]),
            "the run exercises every rule: \(reasons.sorted())")
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()

        for var restored in try PartitionStateModelTests.restored(from: log) {
            var continued = model
            var continuedClock = clock
            var continuedCommit = continued
            for step in 0..<600 {
                // The first rollback, before any commit, returns to the restored state.
                if step == 10 || step % 50 == 49 {
                    restored.rollback()
                    continued = continuedCommit
                    continue
                }
                if step % 50 == 25 {
                    restored.writeChanges { _, _ in }
                    restored.commit()
                    continued.badges.pending = []
                    continuedCommit = continued
                }
                let event = Self.event(&random)
                let time = continuedClock.next(&random)
                try #require(
                    Self.decide(&restored, event, at: time) == continued.decide(event, at: time),
                    "after restore, step \(step): \(event) at \(time)")
            }
        }
    }
}
