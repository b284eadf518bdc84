@testable import FocusGateCore
import Foundation
import Testing

/// Summaries of what a Focus silenced (docs/focus-schedules.md, Summaries), with a fixed clock.
@Suite("Summaries: what a Focus silenced, at the end of its period and at summary times")
struct FocusSummaryTests {
    static let at = FocusScheduleTests.at

    /// Sleep (daily 22:00–07:00 Paris, every app silenced) and Work (Tuesdays 09:00–18:00).
    static func sleepContext(version: Int64 = 7, summaryTimes: [String] = []) throws -> CompiledFocusContext {
        var document = FocusScheduleTests.workAndSleep()
        document.version = version
        document.summaries = .init(times: summaryTimes.map { FocusContext.LocalTime($0)! })
        var compiler = FocusContextCompiler()
        return try compiler.compile(document)
    }

    static func notification(
        _ id: String, app: String = "news", thread: String? = nil, score: Double? = nil,
        level: InterruptionLevel = .active
    ) -> NotificationEvent {
        .fixture(id, app: app, level: level, score: score, thread: thread)
    }

    /// Decides `event` at `instant` as the worker does, with `offset` as its input offset.
    static func decide(
        _ state: inout PartitionState, _ event: NotificationEvent, _ context: CompiledFocusContext, at instant: Int64,
        offset: Int64
    ) -> Decision? {
        state.decide(
            event, lookup: .available(context), defaultRateLimits: .none, repeatedWindowMilliseconds: 180_000,
            nowMilliseconds: instant, sentAtMilliseconds: instant, sourceOffset: offset
        ).decision
    }

    /// Fires the user's due timers at `instant` as the worker does (the timer's own instant passed on).
    static func fire(_ state: inout PartitionState, _ context: CompiledFocusContext?, at instant: Int64) {
        for (userID, due) in state.dueTransitions(atMilliseconds: instant, limit: 100) {
            _ = state.recompute(userID: userID, context: context, nowMilliseconds: instant, timerAt: due)
        }
    }

    /// A night of Sleep: four notifications silenced (one then read), one critical delivered.
    static func night(_ state: inout PartitionState, _ context: CompiledFocusContext) {
        let night = Self.at("2026-11-24T21:30:00Z")
        let events = [
            Self.notification("n1", thread: "t1", score: 0.2),
            Self.notification("n2", thread: "t1"),
            Self.notification("n3", thread: "t2", score: 0.9),
            Self.notification("c1", app: "chat"),
            Self.notification("n4", thread: "t1", score: 1),
            Self.notification("alarm", level: .critical),
        ]
        for (index, event) in events.enumerated() {
            let decision = Self.decide(
                &state, event, context, at: night + Int64(index) * 60_000, offset: 100 + Int64(index))
            #expect(decision?.outcome == (event.id == "alarm" ? .delivered : .silenced))
        }
        _ = state.apply(
            NotificationEvent(kind: .read, id: "r", userID: "u", appID: "news", notificationIDs: ["n4"]),
            lookup: .available(context), nowMilliseconds: night + 600_000
        )
    }

    @Test(
        "the end of Sleep sums up what it silenced and is unread: per app and thread, most relevant then oldest, once")
    func scheduleEnd() throws {
        let context = try Self.sleepContext()
        var state = PartitionState(summaryItemsPerApp: 2)
        Self.night(&state, context)
        #expect(state.pendingSummaries.isEmpty, "Sleep is still on")
        let sleepEnds = Self.at("2026-11-25T06:00:00Z")
        #expect(state.nextTransitionAt() == sleepEnds)
        Self.fire(&state, context, at: sleepEnds + 250)  // a timer fired a little late

        let summary = try #require(state.pendingSummaries.first)
        #expect(state.pendingSummaries.count == 1)
        #expect(summary.trigger == .focusEnded && summary.focus == "Sleep" && summary.userID == "u")
        #expect(summary.periodStartMilliseconds == Self.at("2026-11-24T21:30:00Z"))
        #expect(summary.periodEndMilliseconds == sleepEnds, "the timer's instant, not the moment it fired")
        #expect(summary.contextVersion == 7 && summary.total == 4)
        #expect(summary.apps.map(\.appID) == ["chat", "news"])
        #expect(summary.apps.map(\.total) == [1, 3])
        #expect(summary.apps[0].threads.isEmpty, "c1 has no thread")
        #expect(
            summary.apps[1].threads == [
                FocusSummary.ThreadTotal(threadID: "t1", total: 2), FocusSummary.ThreadTotal(threadID: "t2", total: 1),
            ])
        #expect(summary.apps[1].top.map(\.id) == ["n3", "n1"], "0.9, then 0.2; n2 (no score) past the two kept")
        #expect(summary.apps[1].top.map(\.sourceOffset) == [102, 100])
        #expect(summary.apps[1].top.first?.relevanceScore.map { ($0 * 100).rounded() } == 90)
        #expect(summary.summaryID.count == 16)

        // Listed once: the same Focus ending again (another timer, a new version) lists nothing.
        _ = state.recompute(userID: "u", context: try Self.sleepContext(version: 8), nowMilliseconds: sleepEnds + 500)
        #expect(state.pendingSummaries.count == 1)
    }

    @Test(
        "a summary a context change makes is recognisable when an abort makes it again later: its id comes from the context's version"
    )
    func contextChangeMadeAgain() throws {
        var state = PartitionState()
        Self.night(&state, try Self.sleepContext())
        _ = FocusScheduleTests.changelog(&state)  // committed
        // Version 8 drops the schedules: Sleep ends when the worker applies it, whenever that is.
        var document = FocusScheduleTests.workAndSleep()
        document.version = 8
        document.schedules = []
        document.summaries = .init(times: [])
        var compiler = FocusContextCompiler()
        let off = try compiler.compile(document)
        let applied = Self.at("2026-11-24T23:00:00Z")
        _ = state.recompute(userID: "u", context: off, nowMilliseconds: applied)
        let first = try #require(state.pendingSummaries.first)
        #expect(first.trigger == .focusEnded && first.focus == "Sleep" && first.periodEndMilliseconds == applied)
        state.rollback()
        _ = state.recompute(userID: "u", context: off, nowMilliseconds: applied + 4_000)
        let again = try #require(state.pendingSummaries.first)
        #expect(again.periodEndMilliseconds == applied + 4_000, "applied later")
        #expect(again.summaryID == first.summaryID, "the same summary, recognisable")
        #expect(again.apps == first.apps)
    }

    @Test("a summary is part of the state: rolled back with an abort, made again alike; committed, never repeated")
    func exactlyOnce() throws {
        let context = try Self.sleepContext()
        var state = PartitionState()
        Self.night(&state, context)
        let beforeEnd = FocusScheduleTests.changelog(&state)
        let sleepEnds = Self.at("2026-11-25T06:00:00Z")
        Self.fire(&state, context, at: sleepEnds)
        let first = try #require(state.pendingSummaries.first)
        state.rollback()
        #expect(state.pendingSummaries.isEmpty)
        Self.fire(&state, context, at: sleepEnds + 40)
        #expect(state.pendingSummaries == [first], "the same summary, the same id")
        let afterEnd = FocusScheduleTests.changelog(&state)

        // A restart from the changelog before the end makes the same summary (ids, threads and
        // sources come back from the entries); one from after it makes none.
        var replayed = try FocusScheduleTests.restored(beforeEnd)
        Self.fire(&replayed, context, at: sleepEnds + 900)
        #expect(replayed.pendingSummaries.map(\.summaryID) == [first.summaryID])
        #expect(replayed.pendingSummaries.first?.apps == first.apps)
        var restarted = try FocusScheduleTests.restored(beforeEnd + afterEnd)
        _ = restarted.recompute(userID: "u", context: context, nowMilliseconds: sleepEnds + 1_000, timerAt: sleepEnds)
        #expect(restarted.pendingSummaries.isEmpty)
    }

    @Test("nothing is summed up when nothing was silenced, or all of it was read or cleared")
    func nothingToSay() throws {
        let context = try Self.sleepContext()
        let sleepEnds = Self.at("2026-11-25T06:00:00Z")
        var quiet = PartitionState()
        _ = Self.decide(
            &quiet, Self.notification("alarm", level: .critical), context, at: sleepEnds - 3_600_000, offset: 1)
        Self.fire(&quiet, context, at: sleepEnds)
        #expect(quiet.pendingSummaries.isEmpty)

        var cleared = PartitionState()
        Self.night(&cleared, context)
        for app in ["news", "chat"] {
            _ = cleared.apply(
                NotificationEvent(kind: .clear, id: "c", userID: "u", appID: app), lookup: .available(context),
                nowMilliseconds: sleepEnds - 60_000
            )
        }
        Self.fire(&cleared, context, at: sleepEnds)
        #expect(cleared.pendingSummaries.isEmpty)
    }

    @Test("a manual Focus turned off, or replaced by another, is summed up when the new context arrives")
    func manualChanges() throws {
        var compiler = FocusContextCompiler()
        let personal = try compiler.compile(
            FocusContext(userID: "u", version: 1, focus: "Personal", otherApps: .silence, summaries: .init()))
        let work = try compiler.compile(
            FocusContext(userID: "u", version: 2, focus: "Work", otherApps: .silence, summaries: .init()))
        let off = try compiler.compile(FocusContext(userID: "u", version: 3, summaries: .init()))
        var state = PartitionState()
        let start = Self.at("2026-11-24T10:00:00Z")
        _ = Self.decide(&state, Self.notification("p1"), personal, at: start, offset: 1)
        _ = state.recompute(userID: "u", context: work, nowMilliseconds: start + 60_000)
        #expect(state.pendingSummaries.map(\.focus) == ["Personal"])
        #expect(state.pendingSummaries.first?.periodEndMilliseconds == start + 60_000)
        _ = Self.decide(&state, Self.notification("w1"), work, at: start + 120_000, offset: 2)
        _ = Self.decide(&state, Self.notification("w2", app: "chat"), work, at: start + 180_000, offset: 3)
        state.commit()
        _ = state.recompute(userID: "u", context: off, nowMilliseconds: start + 240_000)
        #expect(state.pendingSummaries.map(\.focus) == ["Work"])
        #expect(state.pendingSummaries.first?.total == 2)
        #expect(state.pendingSummaries.first?.apps.flatMap { $0.top.map(\.id) } == ["w2", "w1"])
    }

    @Test("a decision under a new version sees the Focus ended too, before it is decided")
    func endedSeenByADecision() throws {
        var compiler = FocusContextCompiler()
        let personal = try compiler.compile(
            FocusContext(userID: "u", version: 1, focus: "Personal", otherApps: .silence, summaries: .init()))
        let off = try compiler.compile(FocusContext(userID: "u", version: 2, summaries: .init()))
        var state = PartitionState()
        _ = Self.decide(&state, Self.notification("p1"), personal, at: 1_000, offset: 1)
        _ = Self.decide(&state, Self.notification("d1"), off, at: 2_000, offset: 2)
        #expect(state.pendingSummaries.map { $0.apps.flatMap { $0.top.map(\.id) } } == [["p1"]], "d1 was delivered")
    }

    @Test("each summary time sums up what was silenced since the last summary, while the Focus stays on")
    func summaryTimes() throws {
        var compiler = FocusContextCompiler()
        var document = FocusContext(
            userID: "u", version: 1, focus: "Work", otherApps: .silence, timeZone: "Europe/Paris",
            summaries: .init(atFocusEnd: false, times: [.init("18:00")!, .init("12:00")!]))
        let context = try compiler.compile(document)
        var state = PartitionState()
        _ = Self.decide(&state, Self.notification("m1"), context, at: Self.at("2026-11-24T08:00:00Z"), offset: 1)
        let noon = Self.at("2026-11-24T11:00:00Z")
        #expect(state.nextTransitionAt() == noon, "12:00 in Paris")
        Self.fire(&state, context, at: noon + 30)
        #expect(state.pendingSummaries.map(\.trigger) == [.summaryTime])
        #expect(state.pendingSummaries.map(\.focus) == ["Work"])
        #expect(state.pendingSummaries.map(\.periodEndMilliseconds) == [noon])
        state.commit()
        _ = Self.decide(&state, Self.notification("a1"), context, at: Self.at("2026-11-24T13:00:00Z"), offset: 2)
        let evening = Self.at("2026-11-24T17:00:00Z")
        #expect(state.nextTransitionAt() == evening)
        Self.fire(&state, context, at: evening)
        #expect(state.pendingSummaries.map { $0.apps.flatMap { $0.top.map(\.id) } } == [["a1"]])
        state.commit()
        // Nothing new by the next noon: no summary.
        Self.fire(&state, context, at: noon + ZoneClock.dayMilliseconds)
        #expect(state.pendingSummaries.isEmpty)
        #expect(state.nextTransitionAt() == evening + ZoneClock.dayMilliseconds)

        // The status is not about summary times: focused, until unknown (no expiry, no schedule).
        #expect(context.status(at: noon).until == nil)
        document.summaries = nil
        #expect(try compiler.compile(document).nextTimer(after: noon) == nil)
    }

    @Test("summary times follow the schedules' daylight-saving rules")
    func summaryTimesAcrossDaylightSaving() throws {
        let times = try #require(SummaryTimes([.init("02:30")!], timeZone: "Europe/Paris"))
        // 2026-03-29: Paris skips 02:00–03:00; 02:30 comes when the gap ends (01:00Z).
        #expect(times.next(after: Self.at("2026-03-28T12:00:00Z")) == Self.at("2026-03-29T01:00:00Z"))
        // 2026-10-25: 02:30 happens twice; the first (00:30Z) counts, once.
        #expect(times.next(after: Self.at("2026-10-24T12:00:00Z")) == Self.at("2026-10-25T00:30:00Z"))
        #expect(times.next(after: Self.at("2026-10-25T00:30:00Z")) == Self.at("2026-10-26T01:30:00Z"))
        #expect(times.contains(Self.at("2026-10-25T00:30:00Z")) && !times.contains(Self.at("2026-10-25T01:30:00Z")))
    }

    @Test("summaries in a context: decoded with defaults, encoded, validated with the field named")
    func document() throws {
        let json = #"{"userId":"u","version":1,"timeZone":"Europe/Paris","summaries":{"times":["08:00","18:30"]}}"#
        let context = try FocusContext.decode(from: Data(json.utf8))
        #expect(context.summaries?.times.map(\.description) == ["08:00", "18:30"])
        #expect(context.summaries?.atFocusEnd == true, "the default")
        #expect(try FocusContext.decode(from: context.encoded()) == context)
        #expect(try FocusContext.decode(from: Data(#"{"userId":"u","version":1}"#.utf8)).summaries == nil)
        func refusal(_ body: String) -> String? {
            do {
                _ = try FocusContext.decode(from: Data(#"{"userId":"u","version":1,\#(body)}"#.utf8))
                return nil
            } catch {
                return error.field
            }
        }
        #expect(refusal(#""summaries":{"times":["08:00"]}"#) == "timeZone")
        #expect(refusal(#""timeZone":"UTC","summaries":{"times":["08:00","08:00"]}"#) == "summaries.times[1]")
        #expect(refusal(#""timeZone":"UTC","summaries":{"times":["24:00"]}"#) == "summaries.times[0]")
        let many = (0..<25).map { "\"" + String(format: "%02d:%02d", $0 % 24, $0 < 24 ? 0 : 30) + "\"" }
        #expect(
            refusal(#""timeZone":"UTC","summaries":{"times":[\#(many.joined(separator: ","))]}"#) == "summaries.times")
    }

    @Test("a user whose context has no summaries: nothing is kept for them, nothing is published")
    func optIn() throws {
        var compiler = FocusContextCompiler()
        let personal = try compiler.compile(
            FocusContext(userID: "u", version: 1, focus: "Personal", otherApps: .silence))
        let off = try compiler.compile(FocusContext(userID: "u", version: 2))
        var state = PartitionState()
        let decision = Self.decide(&state, Self.notification("p1", thread: "t"), personal, at: 1_000, offset: 1)
        #expect(decision?.outcome == .silenced)
        #expect(Self.summaryItems(state).isEmpty)
        _ = state.recompute(userID: "u", context: off, nowMilliseconds: 2_000)
        #expect(state.pendingSummaries.isEmpty)
        // Turned on later: what was silenced before has no item and is never listed.
        let on = try compiler.compile(
            FocusContext(userID: "u", version: 3, focus: "Personal", otherApps: .silence, summaries: .init()))
        _ = Self.decide(&state, Self.notification("p2"), on, at: 3_000, offset: 2)
        _ = state.recompute(
            userID: "u",
            context: try compiler.compile(
                FocusContext(userID: "u", version: 4, summaries: .init())), nowMilliseconds: 4_000)
        #expect(state.pendingSummaries.map { $0.apps.flatMap { $0.top.map(\.id) } } == [["p2"]])
    }

    @Test("an entry's thread and summary item survive the changelog; entries written before them still restore")
    func changelogForm() throws {
        var compiler = FocusContextCompiler()
        let personal = try compiler.compile(
            FocusContext(userID: "u", version: 1, focus: "Personal", otherApps: .silence, summaries: .init()))
        var state = PartitionState()
        _ = Self.decide(&state, Self.notification("s1", thread: "t", score: 0.5), personal, at: 5_000, offset: 41)
        _ = state.apply(
            NotificationEvent(id: "d1", userID: "u", appID: "news", filterCriteria: "x", senderID: "bob"),
            lookup: .available(nil), nowMilliseconds: 6_000
        )
        var log = FocusScheduleTests.changelog(&state)
        // d1's record in the form from before decisions and summaries, as an older gateway wrote
        // it: flags 1 (unread) and 128 (no relevance byte), app 1, arrival 1, decided-at 6000,
        // criteria "x", sender "bob".
        let plain = try #require(
            log.firstIndex { $0.0.starts(with: [0, UInt8(ascii: "I")]) && $0.1?.last == UInt8(ascii: "b") })
        log[plain].1 = [129, 1, 1, 0xF0, 0x2E, 2, UInt8(ascii: "x"), 4] + Array("bob".utf8)
        var restored = try FocusScheduleTests.restored(log)
        let entries = restored.entries.filter { $0.has(StateEntry.alive) }.map { restored.attributes[$0.attributes] }
        #expect(
            Set(entries) == [
                EntryAttributes(criteria: nil, sender: nil, thread: "t"), EntryAttributes(criteria: "x", sender: "bob"),
            ])
        #expect(Self.summaryItems(restored) == [SilencedItem(id: "s1", sourceOffset: 41, focus: "Personal")])
        #expect(restored.entries.contains { $0.has(StateEntry.alive) && $0.decidedAt == 6_000 })
        let off = try compiler.compile(FocusContext(userID: "u", version: 2, summaries: .init()))
        _ = restored.recompute(userID: "u", context: off, nowMilliseconds: 7_000)
        #expect(restored.pendingSummaries.first?.apps.first?.top.map(\.sourceOffset) == [41])
    }

    @Test("a silenced notification's item lives and goes with its entry; a rollback puts back a reused entry's")
    func itemsFollowEntries() throws {
        var compiler = FocusContextCompiler()
        let personal = try compiler.compile(
            FocusContext(userID: "u", version: 1, focus: "Personal", otherApps: .silence, summaries: .init()))
        var state = PartitionState(maxUnreadPerApp: 10, dedupeWindow: 10)
        for index in 0..<3_000 {
            _ = Self.decide(&state, Self.notification("n\(index)"), personal, at: Int64(index), offset: Int64(index))
            if index % 100 == 99 { state.commit() }
        }
        // Ten remembered (unread) per user, each with its item; the entries of the 2,990 gone were reused.
        #expect(state.entryCount == 10)
        #expect(Set(Self.summaryItems(state).map(\.id)) == Set((2_990..<3_000).map { "n\($0)" }))
        #expect(state.decisions.count == state.entries.count)
        // A new notification takes the entry the oldest leaves; rolled back, the oldest is back with its item.
        _ = Self.decide(&state, Self.notification("late"), personal, at: 5_000, offset: 5_000)
        #expect(Self.summaryItems(state).contains { $0.id == "late" })
        state.rollback()
        #expect(Set(Self.summaryItems(state).map(\.id)) == Set((2_990..<3_000).map { "n\($0)" }))
        #expect(Self.summaryItems(state).first { $0.id == "n2990" }?.sourceOffset == 2_990)
    }

    /// The summary items of the state's live entries.
    static func summaryItems(_ state: PartitionState) -> [SilencedItem] {
        state.entries.indices.compactMap {
            state.entries[$0].has(StateEntry.alive) ? state.summaryItem(at: UInt32($0)) : nil
        }
    }
}
