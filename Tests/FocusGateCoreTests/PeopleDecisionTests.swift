@testable import FocusGateCore
import FocusGateHarness
import Foundation
import Testing

/// The people lists against the written table of docs/focus-semantics.md (People): every
/// combination of sender × app silenced × predicate × interruption level appears in exactly one
/// row, and the decider answers what the row says.
@Suite("Decisions with people lists (docs/focus-semantics.md)")
struct PeopleDecisionTests {
    static let senders = ["none", "unlisted", "allowed", "silenced"]
    static let apps = ["allowed", "silenced"]
    static let predicates = ["none", "match", "mismatch"]
    static let levels = ["passive", "active", "time-sensitive", "critical"]

    struct Row {
        var sender: [String]
        var app: [String]
        var predicate: [String]
        var level: [String]
        var outcome: String
        var reason: String
        var line: String
    }

    /// The rows between the table's markers, each column read as a list of values (`any`: all).
    static func table() throws -> [Row] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/focus-semantics.md")
        let text = try String(contentsOf: path, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- people-decisions:begin -->"))
        let end = try #require(text.range(of: "<!-- people-decisions:end -->"))
        func values(_ cell: String, all: [String]) -> [String] {
            let listed = cell.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if listed == ["any"] { return all }
            // `active` stands for passive too: the two decide alike.
            return listed.flatMap { $0 == "active" && all == Self.levels ? ["passive", "active"] : [$0] }
        }
        return text[begin.upperBound..<end.lowerBound].split(separator: "\n").dropFirst(2).map { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            return Row(
                sender: values(cells[0], all: Self.senders), app: values(cells[1], all: Self.apps),
                predicate: values(cells[2], all: Self.predicates), level: values(cells[3], all: Self.levels),
                outcome: cells[4], reason: cells[5], line: String(line.prefix(120)))
        }
    }

    /// The context for one combination: app `chat` allowed or silenced with the predicate, and
    /// the people lists naming `boss` (allowed) and `spam` (silenced).
    static func decide(sender: String, app: String, predicate: String, level: String) -> Decision {
        let predicateText: String? =
            switch predicate {
            case "match": "SELF == 'work'"
            case "mismatch": "SELF == 'home'"
            default: nil
            }
        let context = FocusContext.fixture(
            apps: ["chat": .init(filterPredicate: predicateText, silenced: app == "silenced")],
            people: .init(allowed: ["boss", "ally"], silenced: ["spam"])
        ).compiledForTests()
        let senderID: String? =
            switch sender {
            case "allowed": "boss"
            case "silenced": "spam"
            case "unlisted": "stranger"
            default: nil
            }
        return FocusDecider.decide(
            appID: "chat", criteria: "work", interruptionLevel: InterruptionLevel(parsing: level), senderID: senderID,
            lookup: .available(context), nowMilliseconds: DecisionTests.now)
    }

    @Test("every combination is in exactly one row of the table, and decided as the row says")
    func table() throws {
        let rows = try Self.table()
        #expect(rows.count >= 10, "the table was read")
        var covered: [String: String] = [:]
        for row in rows {
            for sender in row.sender {
                for app in row.app {
                    for predicate in row.predicate {
                        for level in row.level {
                            let combination = "\(sender) sender, \(app) app, \(predicate) predicate, \(level)"
                            #expect(covered[combination] == nil, "\(combination) is in two rows")
                            covered[combination] = row.line
                            let decision = Self.decide(sender: sender, app: app, predicate: predicate, level: level)
                            #expect(
                                decision.outcome.rawValue == row.outcome && decision.reason.rawValue == row.reason,
                                "\(combination): decided \(decision.outcome) \(decision.reason), the row says \(row.outcome) \(row.reason)"
                            )
                        }
                    }
                }
            }
        }
        let all = Self.senders.count * Self.apps.count * Self.predicates.count * Self.levels.count
        #expect(covered.count == all, "\(all - covered.count) combinations are in no row")
    }

    @Test("an app the Focus does not list, silenced by otherApps, lets an allowed person through like a silenced one")
    func otherAppsSilenced() {
        let context = FocusContext.fixture(otherApps: .silence, people: .init(allowed: ["boss"]))
            .compiledForTests()
        func decide(_ sender: String?) -> Decision {
            FocusDecider.decide(
                appID: "unlisted-app", criteria: "work", interruptionLevel: .active, senderID: sender,
                lookup: .available(context), nowMilliseconds: DecisionTests.now)
        }
        #expect(decide("boss").reason == .personAllowed && decide("boss").outcome == .delivered)
        #expect(decide(nil).reason == .appSilenced && decide("other").reason == .appSilenced)
    }

    @Test("no Focus on: the lists do not apply")
    func focusOff() {
        let context = FocusContext.fixture(focus: nil, people: .init(silenced: ["spam"])).compiledForTests()
        let decision = FocusDecider.decide(
            appID: "chat", criteria: "home", interruptionLevel: .active, senderID: "spam",
            lookup: .available(context), nowMilliseconds: DecisionTests.now)
        #expect(decision.reason == .noFocus && decision.outcome == .delivered)
    }

    @Test("badges count what the lists and the filter deliver")
    func badges() {
        let context = FocusContext.fixture(
            apps: ["chat": .init(silenced: true), "mail": .init()], people: .init(allowed: ["boss"], silenced: ["spam"])
        ).compiledForTests()
        func counts(_ app: String, _ sender: String?) -> Bool {
            FocusDecider.countsInBadge(
                appID: app, criteria: "work", senderID: sender, context: context, nowMilliseconds: DecisionTests.now)
        }
        #expect(counts("chat", "boss") && !counts("chat", nil) && !counts("chat", "stranger"))
        #expect(counts("mail", nil) && !counts("mail", "spam"))
    }

    @Test("the lookup costs the same with 5,000 people: the lists are one hash table")
    func largeLists() {
        let people = FocusContext.People(
            allowed: (0..<5_000).map { "friend-\($0)" }, silenced: (0..<5_000).map { "muted-\($0)" })
        let context = FocusContext.fixture(apps: ["chat": .init(silenced: true)], people: people).compiledForTests()
        #expect(context.personList(of: "friend-4999") == .allowed)
        #expect(context.personList(of: "muted-0") == .silenced)
        #expect(context.personList(of: "friend-5000") == nil && context.personList(of: nil) == nil)
    }
}

/// "Allow Repeated Calls" for notifications: the state remembers each user's recent senders by
/// record timestamp; the decider lets the second one within the window through.
@Suite("Repeated senders")
struct RepeatedSenderTests {
    static let window: Int64 = 180_000
    static let t0: Int64 = 1_795_000_000_000

    static func context(allowRepeated: Bool = true) -> CompiledFocusContext {
        FocusContext.fixture(
            apps: ["chat": .init(silenced: true)],
            people: .init(silenced: ["spam"], allowRepeated: allowRepeated)
        ).compiledForTests()
    }

    static func notification(_ id: String, from sender: String?) -> NotificationEvent {
        .fixture(id, criteria: "work", sender: sender)
    }

    @Test("a repeated sender gets through a silenced app when the Focus allows it; not a silenced person")
    func decisions() {
        func decide(_ sender: String, repeated: Bool, allow: Bool = true, level: InterruptionLevel = .active)
            -> Decision
        {
            FocusDecider.decide(
                appID: "chat", criteria: "work", interruptionLevel: level, senderID: sender, repeatedSender: repeated,
                lookup: .available(Self.context(allowRepeated: allow)), nowMilliseconds: DecisionTests.now)
        }
        #expect(decide("mom", repeated: true).reason == .repeatedSender)
        #expect(decide("mom", repeated: true).outcome == .delivered)
        #expect(decide("mom", repeated: false).reason == .appSilenced)
        #expect(decide("mom", repeated: true, allow: false).reason == .appSilenced)
        #expect(decide("spam", repeated: true).reason == .personSilenced, "a silenced person stays silenced")
        #expect(decide("mom", repeated: true, level: .critical).reason == .breakthroughCritical)
    }

    @Test("the second notification within the window, by record timestamps, whatever the wall clock")
    func window() {
        var state = PartitionState()
        let now = Self.t0 + 10 * 86_400_000  // the wall clock: days later, as in a replay
        func repeated(_ sender: String, at time: Int64) -> Bool {
            state.isRepeatedSender(
                userID: "u", senderID: sender, atMilliseconds: time, windowMilliseconds: Self.window)
        }
        #expect(!repeated("mom", at: Self.t0), "no state yet")
        _ = state.apply(
            Self.notification("n1", from: "mom"), lookup: .available(nil), nowMilliseconds: now,
            sentAtMilliseconds: Self.t0
        )
        #expect(repeated("mom", at: Self.t0 + Self.window))
        #expect(!repeated("mom", at: Self.t0 + Self.window + 1))
        #expect(repeated("mom", at: Self.t0 - 1_000), "an earlier timestamp from another producer's clock")
        #expect(!repeated("dad", at: Self.t0 + 1))
        #expect(!state.isRepeatedSender(userID: "u", senderID: nil, atMilliseconds: Self.t0, windowMilliseconds: 1))
        // A duplicate is no notification: it moves nothing.
        _ = state.apply(
            Self.notification("n1", from: "mom"), lookup: .available(nil), nowMilliseconds: now,
            sentAtMilliseconds: Self.t0 + 150_000
        )
        #expect(!repeated("mom", at: Self.t0 + Self.window + 1))
    }

    @Test("four senders a user: a fifth takes the oldest's place")
    func bounded() {
        var state = PartitionState()
        for (index, sender) in ["a", "b", "c", "d", "e"].enumerated() {
            _ = state.apply(
                Self.notification("n\(index)", from: sender), lookup: .available(nil), nowMilliseconds: Self.t0,
                sentAtMilliseconds: Self.t0 + Int64(index)
            )
        }
        let at = Self.t0 + 10
        #expect(
            !state.isRepeatedSender(userID: "u", senderID: "a", atMilliseconds: at, windowMilliseconds: Self.window))
        for sender in ["b", "c", "d", "e"] {
            #expect(
                state.isRepeatedSender(
                    userID: "u", senderID: sender, atMilliseconds: at, windowMilliseconds: Self.window))
        }
    }

    @Test("kept in the changelog: restored alike; a rollback forgets what was not committed")
    func changelog() throws {
        var state = PartitionState()
        _ = state.apply(
            Self.notification("n1", from: "mom"), lookup: .available(nil), nowMilliseconds: Self.t0,
            sentAtMilliseconds: Self.t0
        )
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
        #expect(log.contains { $0.key.starts(with: [0, UInt8(ascii: "P")]) }, "a senders record")

        _ = state.apply(
            Self.notification("n2", from: "dad"), lookup: .available(nil), nowMilliseconds: Self.t0,
            sentAtMilliseconds: Self.t0 + 5
        )
        #expect(
            state.isRepeatedSender(userID: "u", senderID: "dad", atMilliseconds: Self.t0 + 6, windowMilliseconds: 10))
        state.rollback()
        #expect(
            !state.isRepeatedSender(userID: "u", senderID: "dad", atMilliseconds: Self.t0 + 6, windowMilliseconds: 10))
        #expect(
            state.isRepeatedSender(userID: "u", senderID: "mom", atMilliseconds: Self.t0 + 6, windowMilliseconds: 10))

        var restored = PartitionState()
        for record in log { try restored.restore(key: record.key, value: record.value) }
        restored.finishRestore()
        #expect(
            restored.isRepeatedSender(userID: "u", senderID: "mom", atMilliseconds: Self.t0 + 6, windowMilliseconds: 10)
        )
        #expect(
            !restored.isRepeatedSender(
                userID: "u", senderID: "dad", atMilliseconds: Self.t0 + 6, windowMilliseconds: 10))
    }
}

extension RepeatedSenderTests {
    @Test(
        "senders are written newest first, each time but the first as its distance below the one before; the old form is read, then replaced by a tombstone"
    )
    func compactForm() throws {
        // Four senders heard from out of time order, minutes apart.
        var state = PartitionState()
        let heard: [(String, Int64)] = [("b", 120_000), ("a", 0), ("d", 1_000), ("c", 61_000)]
        for (index, (sender, after)) in heard.enumerated() {
            _ = state.apply(
                Self.notification("n\(index)", from: sender), lookup: .available(nil), nowMilliseconds: Self.t0,
                sentAtMilliseconds: Self.t0 + after
            )
        }
        var log: [(key: [UInt8], value: [UInt8]?)] = []
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
        let record = try #require(log.first { $0.key.starts(with: [0, UInt8(ascii: "P")]) })
        // 4 × 8 bytes of hashes, the newest time in 6 bytes, the gaps 59,000, 60,000 and 1,000 ms in 3, 3 and 2.
        #expect(record.value?.count == 46)  // the old form: 56
        var restored = PartitionState()
        for record in log { try restored.restore(key: record.key, value: record.value) }
        restored.finishRestore()
        for (sender, after) in heard {
            // Within a millisecond of its time, not of a millisecond before it.
            #expect(
                restored.isRepeatedSender(
                    userID: "u", senderID: sender, atMilliseconds: Self.t0 + after + 1, windowMilliseconds: 1))
            #expect(
                !restored.isRepeatedSender(
                    userID: "u", senderID: sender, atMilliseconds: Self.t0 + after - 2, windowMilliseconds: 1))
        }

        // The old form: each sender's hash and full time, under `S`.
        var old: [UInt8] = []
        for sender in ["mom", "dad"] {
            withUnsafeBytes(of: PartitionState.senderHash(sender).littleEndian) { old.append(contentsOf: $0) }
            PartitionState.writeVarint(UInt64(Self.t0), to: &old)
        }
        let oldKey = [0, UInt8(ascii: "S")] + Array("u".utf8)
        var upgraded = PartitionState()
        for record in log where record.key[1] != UInt8(ascii: "P") {
            try upgraded.restore(key: record.key, value: record.value)
        }
        try upgraded.restore(key: oldKey, value: old)
        upgraded.finishRestore()
        #expect(upgraded.isRepeatedSender(userID: "u", senderID: "dad", atMilliseconds: Self.t0, windowMilliseconds: 1))
        _ = upgraded.apply(
            Self.notification("n", from: "sis"), lookup: .available(nil), nowMilliseconds: Self.t0,
            sentAtMilliseconds: Self.t0 + 1
        )
        var written: [(key: [UInt8], value: [UInt8]?)] = []
        upgraded.writeChanges { key, value in
            if key[1] == UInt8(ascii: "S") || key[1] == UInt8(ascii: "P") { written.append((key, value)) }
        }
        upgraded.commit()
        #expect(written.map(\.key) == [oldKey, [0, UInt8(ascii: "P")] + Array("u".utf8)])
        #expect(written.first?.value == nil, "the old record's tombstone first")
        // Written once: the next change of the senders writes the new record alone.
        _ = upgraded.apply(
            Self.notification("n2", from: "bro"), lookup: .available(nil), nowMilliseconds: Self.t0,
            sentAtMilliseconds: Self.t0 + 2
        )
        var next: [[UInt8]] = []
        upgraded.writeChanges { key, _ in if key[1] == UInt8(ascii: "S") { next.append(key) } }
        #expect(next.isEmpty)
    }

    @Test("the record sizes docs/state.md states")
    func sizes() {
        #expect(MemoryLayout<StateEntry>.stride == 48)
        #expect(MemoryLayout<SenderRing>.stride == 72)
        #expect(MemoryLayout<UserSlot>.stride + MemoryLayout<String>.stride == 48)
        // The app id's tag fills what was padding.
        #expect(MemoryLayout<AppSlot>.stride + MemoryLayout<String>.stride == 72)
        #expect(MemoryLayout<RateWindow>.stride == 64)
    }
}
