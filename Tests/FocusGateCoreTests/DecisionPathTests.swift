@testable import FocusGateCore
import Foundation
import Testing

/// The one decision path: the record loop (`PartitionState.decide`) and `explain`
/// (`DecisionExplanation`) both decide through `FocusDecider.decide`.
@Suite("One decision path")
struct DecisionPathTests {
    static let now: Int64 = 1_800_000_000_000

    static func compiled(_ context: FocusContext) throws -> CompiledFocusContext {
        var compiler = FocusContextCompiler()
        return try compiler.compile(context)
    }

    @Test("a duplicate is known by its id before anything is decided: no decision, nothing of its context taken up")
    func duplicateFirst() throws {
        var state = PartitionState()
        let work = try Self.compiled(FocusContext(userID: "u", version: 1, focus: "Work", otherApps: .silence))
        let sleep = try Self.compiled(FocusContext(userID: "u", version: 2, focus: "Sleep", otherApps: .silence))
        let event = NotificationEvent(id: "n-1", userID: "u", appID: "chat", filterCriteria: "work")
        func decide(_ context: CompiledFocusContext) -> (decision: Decision?, admission: PartitionState.Admission) {
            state.decide(
                event, lookup: .available(context), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
                nowMilliseconds: Self.now, sentAtMilliseconds: Self.now)
        }
        let first = decide(work)
        #expect(first.decision?.reason == .appSilenced && first.decision?.focus == "Work")
        #expect(state.focusNames == ["Work"])
        let again = decide(sleep)
        #expect(again.admission == .duplicate)
        #expect(again.decision == nil, "a duplicate has no decision")
        #expect(state.focusNames == ["Work"], "its decision under Sleep was never made, so Sleep was never kept")
        #expect(state.badges(userID: "u").map(\.unread) == [1])
    }

    /// Contexts and events that go through every stage: people lists, breakthroughs, a schedule,
    /// hidden badges and rate limits.
    static let cases: [(name: String, context: FocusContext?, event: NotificationEvent)] = {
        let people = FocusContext.People(allowed: ["boss"], silenced: ["spam"])
        let work = FocusContext(
            userID: "u", version: 4, focus: "Work", otherApps: .silence,
            apps: ["chat": .init(filterPredicate: "SELF == 'work'"), "mail": .init(silenced: true)], people: people,
            rateLimits: .init(perUser: .init(max: 5, windowSeconds: 60)))
        let hidden = FocusContext(userID: "u", version: 5, focus: "Sleep", hideBadges: true, otherApps: .silence)
        func event(_ app: String, _ criteria: String?, _ level: InterruptionLevel = .active, sender: String? = nil)
            -> NotificationEvent
        {
            NotificationEvent(
                id: "n", userID: "u", appID: app, filterCriteria: criteria, interruptionLevel: level, senderID: sender)
        }
        return [
            ("no context", nil, event("chat", "work")),
            ("predicate match", work, event("chat", "work")),
            ("predicate mismatch", work, event("chat", "home")),
            ("mismatch, time-sensitive", work, event("chat", "home", .timeSensitive)),
            ("silenced app, critical", work, event("mail", nil, .critical)),
            ("silenced app, allowed person", work, event("mail", "work", sender: "boss")),
            ("silenced person", work, event("chat", "work", sender: "spam")),
            ("other app", work, event("news", "x")),
            ("hidden badges", hidden, event("chat", "work")),
        ]
    }()

    @Test(
        "explain and the record loop give the same decision, Focus, version and badge count",
        arguments: 0..<Self.cases.count)
    func explainAgrees(index: Int) throws {
        let (_, context, event) = Self.cases[index]
        let explained = try DecisionExplanation(event: event, context: context, nowMilliseconds: Self.now)
        var state = PartitionState()
        let (decision, _) = state.decide(
            event, lookup: .available(try context.map(Self.compiled)), defaultRateLimits: .none,
            repeatedWindowMilliseconds: 0, nowMilliseconds: Self.now, sentAtMilliseconds: Self.now)
        let decided = try #require(decision)
        #expect(explained.decision == decided.outcome.rawValue, "\(Self.cases[index].name)")
        #expect(explained.reason == decided.reason.rawValue, "\(Self.cases[index].name)")
        #expect(explained.focus == decided.focus && explained.contextVersion == decided.contextVersion)
        let counted = state.badges(userID: "u").first.map { $0.badge == 1 }
        #expect(counted == explained.badgeCounted, "\(Self.cases[index].name): the state's badge and explain's count")
    }
}
