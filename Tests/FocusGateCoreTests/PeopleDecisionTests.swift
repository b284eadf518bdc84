import FocusGateCore
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

    @Test("the lookup costs the same with 5,000 people: the lists are sets")
    func largeLists() {
        let people = FocusContext.People(
            allowed: (0..<5_000).map { "friend-\($0)" }, silenced: (0..<5_000).map { "muted-\($0)" })
        let context = FocusContext.fixture(apps: ["chat": .init(silenced: true)], people: people).compiledForTests()
        #expect(context.personList(of: "friend-4999") == .allowed)
        #expect(context.personList(of: "muted-0") == .silenced)
        #expect(context.personList(of: "friend-5000") == nil && context.personList(of: nil) == nil)
    }
}
