@testable import FocusGateCore
import Foundation
import Testing

/// Focus schedules in the user's time zone (docs/focus-schedules.md), with a fixed clock: every
/// instant below is given, none is read from the system.
@Suite("Focus schedules: time zones, daylight-saving changes, windows past midnight, manual override")
struct FocusScheduleTests {
    static func at(_ text: String) -> Int64 {
        Timestamp.parseRFC3339(text)!
    }

    static func context(
        zone: String, _ schedules: [FocusContext.Schedule], focus: String? = nil, focusSetAt: String? = nil,
        expiresAt: String? = nil
    ) -> FocusContext {
        FocusContext(
            userID: "u", version: 1, focus: focus,
            expiresAt: expiresAt.map { Date(timeIntervalSince1970: Double(Self.at($0)) / 1000) },
            timeZone: zone,
            focusSetAt: focusSetAt.map { Date(timeIntervalSince1970: Double(Self.at($0)) / 1000) },
            foci: ["Sleep": .init(hideBadges: true), "Work": .init(otherApps: .silence)],
            schedules: schedules)
    }

    static func window(
        _ days: [FocusContext.Weekday], _ start: String, _ end: String, focus: String = "Sleep"
    ) -> FocusContext.Schedule {
        FocusContext.Schedule(focus: focus, days: days, start: .init(start)!, end: .init(end)!)
    }

    /// The instant the Focus turns on, found by asking the timeline one millisecond at a time
    /// around the expected instant: off just before, on at it.
    static func expectTurnsOn(_ timeline: FocusTimeline, at expected: String, _ focus: String = "Sleep") {
        let instant = Self.at(expected)
        #expect(timeline.focus(at: instant - 1) == nil, "still off just before \(expected)")
        #expect(timeline.focus(at: instant) == focus, "on at \(expected)")
        #expect(timeline.state(at: instant).since == instant)
    }

    // MARK: - Daylight-saving changes

    @Test(
        "Europe/Paris: a start in the spring-forward gap fires when the gap ends; one in the fall-back overlap fires once, at its first occurrence"
    )
    func paris() {
        // 2027-03-28, Sunday: 02:00 CET becomes 03:00 CEST (01:00Z); 02:30 does not exist.
        let spring = FocusTimeline(Self.context(zone: "Europe/Paris", [Self.window([.sun], "02:30", "07:00")]))
        Self.expectTurnsOn(spring, at: "2027-03-28T01:00:00Z")
        #expect(spring.state(at: Self.at("2027-03-28T01:00:00Z")).until == Self.at("2027-03-28T05:00:00Z"))
        #expect(spring.focus(at: Self.at("2027-03-28T05:00:00Z")) == nil, "off at 07:00 CEST")

        // 2026-10-25, Sunday: 03:00 CEST becomes 02:00 CET (01:00Z); 02:30 happens twice.
        let autumn = FocusTimeline(Self.context(zone: "Europe/Paris", [Self.window([.sun], "02:30", "04:00")]))
        Self.expectTurnsOn(autumn, at: "2026-10-25T00:30:00Z")
        // The second 02:30 (01:30Z) starts nothing: the window that began at the first goes on.
        #expect(autumn.state(at: Self.at("2026-10-25T01:30:00Z")).since == Self.at("2026-10-25T00:30:00Z"))
        #expect(autumn.focus(at: Self.at("2026-10-25T02:59:59.999Z")) == "Sleep")
        #expect(autumn.focus(at: Self.at("2026-10-25T03:00:00Z")) == nil, "off at 04:00 CET")
    }

    @Test("America/New_York: the same rules on the American dates")
    func newYork() {
        // 2027-03-14, Sunday: 02:00 EST becomes 03:00 EDT (07:00Z).
        let spring = FocusTimeline(Self.context(zone: "America/New_York", [Self.window([.sun], "02:15", "06:00")]))
        Self.expectTurnsOn(spring, at: "2027-03-14T07:00:00Z")
        // 2026-11-01, Sunday: 02:00 EDT becomes 01:00 EST (06:00Z); 01:30 happens twice.
        let autumn = FocusTimeline(Self.context(zone: "America/New_York", [Self.window([.sun], "01:30", "05:00")]))
        Self.expectTurnsOn(autumn, at: "2026-11-01T05:30:00Z")
        #expect(autumn.focus(at: Self.at("2026-11-01T06:30:00Z")) == "Sleep", "the second 01:30 goes on")
        #expect(autumn.focus(at: Self.at("2026-11-01T10:00:00Z")) == nil, "off at 05:00 EST")
    }

    @Test("Australia/Lord_Howe: a half-hour daylight-saving change")
    func lordHowe() {
        // 2026-10-04, Sunday: 02:00 (+10:30) becomes 02:30 (+11) at 15:30Z the day before.
        let spring = FocusTimeline(
            Self.context(zone: "Australia/Lord_Howe", [Self.window([.sun], "02:10", "08:00")]))
        Self.expectTurnsOn(spring, at: "2026-10-03T15:30:00Z")
        #expect(spring.focus(at: Self.at("2026-10-03T21:00:00Z")) == nil, "off at 08:00 (+11)")
        // 2027-04-04, Sunday: 02:00 (+11) becomes 01:30 (+10:30) at 15:00Z the day before;
        // 01:45 happens twice, the first time at 14:45Z.
        let autumn = FocusTimeline(
            Self.context(zone: "Australia/Lord_Howe", [Self.window([.sun], "01:45", "09:00")]))
        Self.expectTurnsOn(autumn, at: "2027-04-03T14:45:00Z")
        #expect(autumn.state(at: Self.at("2027-04-03T15:15:00Z")).since == Self.at("2027-04-03T14:45:00Z"))
        #expect(autumn.focus(at: Self.at("2027-04-03T22:30:00Z")) == nil, "off at 09:00 (+10:30)")
    }

    // MARK: - Windows and overlaps

    @Test("a window that ends before it starts runs past midnight and belongs to its start day")
    func pastMidnight() {
        let timeline = FocusTimeline(Self.context(zone: "Europe/Paris", [Self.window([.fri], "22:00", "07:00")]))
        // Friday 2026-11-27 22:00 CET is 21:00Z; it runs to Saturday 07:00 CET (06:00Z).
        Self.expectTurnsOn(timeline, at: "2026-11-27T21:00:00Z")
        #expect(timeline.focus(at: Self.at("2026-11-28T05:59:59.999Z")) == "Sleep", "Saturday 06:59: Friday's window")
        #expect(timeline.focus(at: Self.at("2026-11-28T06:00:00Z")) == nil)
        #expect(timeline.focus(at: Self.at("2026-11-27T05:00:00Z")) == nil, "Friday 06:00: Thursday has no window")
        #expect(timeline.focus(at: Self.at("2026-11-28T21:30:00Z")) == nil, "Saturday night: no window")
        // The next transition after Saturday's end is the next Friday's start.
        #expect(timeline.state(at: Self.at("2026-11-28T06:00:00Z")).until == Self.at("2026-12-04T21:00:00Z"))
    }

    @Test("of windows open at once, the one that started last is on; when it ends the other is back")
    func overlapping() {
        let timeline = FocusTimeline(
            Self.context(
                zone: "Europe/Paris",
                [Self.window([.tue], "09:00", "18:00", focus: "Work"), Self.window([.tue], "12:00", "13:00")]))
        #expect(timeline.focus(at: Self.at("2026-11-24T10:00:00Z")) == "Work")
        #expect(timeline.focus(at: Self.at("2026-11-24T11:00:00Z")) == "Sleep")
        #expect(
            timeline.state(at: Self.at("2026-11-24T12:00:00Z"))
                == FocusState(
                    focus: "Work", cause: .schedule, since: Self.at("2026-11-24T08:00:00Z"),
                    until: Self.at("2026-11-24T17:00:00Z")))
    }

    // MARK: - Manual Focus

    @Test("a manual Focus wins until the next schedule boundary, then the schedule rules")
    func manualOverride() {
        let daily: [FocusContext.Weekday] = FocusContext.Weekday.allCases
        // Work set by hand on Tuesday at 21:00 CET (20:00Z); Sleep is scheduled 22:00–07:00.
        let work = FocusTimeline(
            Self.context(
                zone: "Europe/Paris", [Self.window(daily, "22:00", "07:00")], focus: "Work",
                focusSetAt: "2026-11-24T20:00:00Z"))
        #expect(work.focus(at: Self.at("2026-11-24T19:59:59.999Z")) == nil, "before it was set: the schedule")
        #expect(
            work.state(at: Self.at("2026-11-24T20:30:00Z"))
                == FocusState(
                    focus: "Work", cause: .manual, since: Self.at("2026-11-24T20:00:00Z"),
                    until: Self.at("2026-11-24T21:00:00Z")))
        #expect(work.state(at: Self.at("2026-11-24T21:00:00Z")).cause == .schedule)
        #expect(work.focus(at: Self.at("2026-11-24T21:00:00Z")) == "Sleep")

        // Sleep turned off by hand at 23:00 CET: off until the window's end at 07:00, on again at 22:00.
        let off = FocusTimeline(
            Self.context(
                zone: "Europe/Paris", [Self.window(daily, "22:00", "07:00")], focusSetAt: "2026-11-24T22:00:00Z"))
        #expect(off.state(at: Self.at("2026-11-24T23:00:00Z")).cause == .manual)
        #expect(off.focus(at: Self.at("2026-11-24T23:00:00Z")) == nil)
        #expect(off.state(at: Self.at("2026-11-25T06:00:00Z")).cause == .none)
        #expect(off.focus(at: Self.at("2026-11-25T21:00:00Z")) == "Sleep")
    }

    @Test("a manual Focus that expires before the next boundary leaves the schedule's state, named expiry")
    func manualExpiry() {
        let timeline = FocusTimeline(
            Self.context(
                zone: "Europe/Paris", [Self.window([.tue], "22:00", "23:00")], focus: "Work",
                focusSetAt: "2026-11-24T07:00:00Z", expiresAt: "2026-11-24T08:00:00Z"))
        #expect(timeline.focus(at: Self.at("2026-11-24T08:00:00Z")) == "Work", "on through its expiresAt")
        #expect(
            timeline.state(at: Self.at("2026-11-24T08:00:00.001Z"))
                == FocusState(
                    focus: nil, cause: .expired, since: Self.at("2026-11-24T08:00:00.001Z"),
                    until: Self.at("2026-11-24T21:00:00Z")))
        #expect(timeline.focus(at: Self.at("2026-11-24T21:00:00Z")) == "Sleep")
    }

    @Test("a context without schedules is the manual Focus alone, as before")
    func withoutSchedules() {
        var context = FocusContext(userID: "u", version: 1, focus: "Work")
        #expect(FocusTimeline(context).state(at: 0) == FocusState(focus: "Work", cause: .manual))
        context.expiresAt = Date(timeIntervalSince1970: 10)
        #expect(FocusTimeline(context).state(at: 10_000) == FocusState(focus: "Work", cause: .manual, until: 10_001))
        #expect(FocusTimeline(context).state(at: 10_001) == FocusState(focus: nil, cause: .expired, since: 10_001))
        #expect(
            FocusTimeline(FocusContext(userID: "u", version: 1)).state(at: 0) == FocusState(focus: nil, cause: .none))
    }

    // MARK: - The document

    @Test("schedules in a context: decoded, encoded, validated with the field named")
    func document() throws {
        let json = """
            {"userId":"u","version":1,"timeZone":"Europe/Paris",
             "foci":{"Sleep":{"hideBadges":true,"otherApps":"silence"}},
             "schedules":[{"focus":"Sleep","days":["mon","tue"],"start":"22:00","end":"07:00"}]}
            """
        let context = try FocusContext.decode(from: Data(json.utf8))
        #expect(context.schedules == [Self.window([.mon, .tue], "22:00", "07:00")])
        #expect(context.configuration(of: "Sleep").hideBadges)
        #expect(try FocusContext.decode(from: context.encoded()) == context)
        let plain = FocusContext(userID: "u", version: 1)
        #expect(
            !String(decoding: plain.encoded(), as: UTF8.self).contains("schedules"), "old documents encode as before")
        let sleep = #"{"Sleep":{}}"#
        for (document, field) in [
            (#""timeZone":"Mars/Olympus","foci":\#(sleep)"#, "timeZone"),
            (
                #""timeZone":"Europe/Paris","foci":\#(sleep),"schedules":[{"focus":"Sleep","days":["mon"],"start":"22:00","end":"22:00"}]"#,
                "schedules[0].end"
            ),
            (
                #""timeZone":"Europe/Paris","foci":\#(sleep),"schedules":[{"focus":"Nap","days":["mon"],"start":"13:00","end":"14:00"}]"#,
                "schedules[0].focus"
            ),
            (
                #""timeZone":"Europe/Paris","foci":\#(sleep),"schedules":[{"focus":"Sleep","days":["mon"],"start":"24:00","end":"07:00"}]"#,
                "schedules[0].start"
            ),
            (
                #""timeZone":"Europe/Paris","foci":\#(sleep),"schedules":[{"focus":"Sleep","days":["someday"],"start":"22:00","end":"07:00"}]"#,
                "schedules[0].days[0]"
            ),
            (
                #""timeZone":"Europe/Paris","foci":\#(sleep),"schedules":[{"focus":"Sleep","days":[],"start":"22:00","end":"07:00"}]"#,
                "schedules[0].days"
            ),
            (
                #""foci":\#(sleep),"schedules":[{"focus":"Sleep","days":["mon"],"start":"22:00","end":"07:00"}]"#,
                "timeZone"
            ),
            (
                #""focus":"Work","timeZone":"Europe/Paris","foci":\#(sleep),"schedules":[{"focus":"Sleep","days":["mon"],"start":"22:00","end":"07:00"}]"#,
                "focusSetAt"
            ),
            (
                #""foci":{"Sleep":{"apps":{"a":{"filterPredicate":"SELF MATCHES 'x'"}}}}"#,
                "foci.Sleep.apps.a.filterPredicate"
            ),
        ] {
            let error = #expect(throws: FocusContextError.self) {
                try FocusContext.decode(from: Data(#"{"userId":"u","version":1,\#(document)}"#.utf8))
            }
            #expect(error?.field == field, "\(document): \(String(describing: error))")
        }
    }
}

// MARK: - Decisions and badges under schedules

extension FocusScheduleTests {
    /// Work (Tuesdays 09:00–18:00, only chat) and Sleep (daily 22:00–07:00, badges hidden, every
    /// app silenced) in Paris, one version for all of it.
    static func workAndSleep() -> FocusContext {
        FocusContext(
            userID: "u", version: 7, timeZone: "Europe/Paris",
            foci: [
                "Work": .init(otherApps: .silence, apps: ["chat": .init()]),
                "Sleep": .init(hideBadges: true, otherApps: .silence),
            ],
            schedules: [
                Self.window([.tue], "09:00", "18:00", focus: "Work"),
                Self.window(FocusContext.Weekday.allCases, "22:00", "07:00"),
            ])
    }

    @Test("decisions follow the Focus a schedule has on, with that Focus's configuration")
    func decisions() throws {
        var compiler = FocusContextCompiler()
        let context = try compiler.compile(Self.workAndSleep())
        func decide(_ app: String, _ instant: String) -> String {
            let decision = FocusDecider.decide(
                NotificationEvent(kind: .notification, id: "n", userID: "u", appID: app),
                lookup: .available(context), nowMilliseconds: Self.at(instant)
            ).decision
            return "\(decision.reason) \(decision.focus ?? "-")"
        }
        #expect(decide("news", "2026-11-24T09:00:00Z") == "app-silenced Work", "Tuesday 10:00")
        #expect(decide("chat", "2026-11-24T09:00:00Z") == "no-criteria Work", "chat is allowed")
        #expect(decide("news", "2026-11-24T19:00:00Z") == "no-focus -", "Tuesday 20:00")
        #expect(decide("chat", "2026-11-24T22:00:00Z") == "app-silenced Sleep", "Tuesday 23:00")
        #expect(decide("news", "2026-11-25T09:00:00Z") == "no-focus -", "Wednesday 10:00: no Work")
    }

    @Test("badges are recounted when a schedule changes the Focus, at the same context version")
    func badges() throws {
        var compiler = FocusContextCompiler()
        let context = try compiler.compile(Self.workAndSleep())
        var state = PartitionState()
        let evening = Self.at("2026-11-24T19:00:00Z")
        _ = state.apply(
            NotificationEvent(kind: .notification, id: "n1", userID: "u", appID: "news"),
            lookup: .available(context),
            nowMilliseconds: evening
        )
        #expect(state.badges(userID: "u").map(\.badge) == [1])
        let night = state.recompute(userID: "u", context: context, nowMilliseconds: Self.at("2026-11-24T21:00:00Z"))
        #expect(night.map(\.badge) == [0] && night.first?.focus == "Sleep", "Sleep hides badges")
        let morning = state.recompute(userID: "u", context: context, nowMilliseconds: Self.at("2026-11-25T06:00:00Z"))
        #expect(morning.map(\.badge) == [1] && morning.first?.focus == nil)
        let work = state.recompute(userID: "u", context: context, nowMilliseconds: Self.at("2026-12-01T08:00:00Z"))
        #expect(work.map(\.badge) == [0] && work.first?.focus == "Work", "Work silences news: not counted")
    }

    @Test("the Focus worked out ahead for the horizon is the one computed at each instant")
    func horizon() throws {
        var compiler = FocusContextCompiler()
        let from = Self.at("2026-11-24T00:00:00Z")
        let ahead = try compiler.compile(Self.workAndSleep(), horizonFrom: from)
        let computed = try compiler.compile(Self.workAndSleep())
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let instant =
                from - ZoneClock.dayMilliseconds + Int64.random(in: 0..<(4 * ZoneClock.dayMilliseconds), using: &random)
            #expect(ahead.inForce(atMilliseconds: instant).focus == computed.inForce(atMilliseconds: instant).focus)
            #expect(ahead.nextTransition(after: instant) == computed.nextTransition(after: instant))
        }
        // Exactly at the boundaries too.
        var instant = from
        while let next = computed.nextTransition(after: instant), next < from + 3 * ZoneClock.dayMilliseconds {
            #expect(ahead.inForce(atMilliseconds: next).focus == computed.inForce(atMilliseconds: next).focus)
            #expect(ahead.inForce(atMilliseconds: next - 1).focus == computed.inForce(atMilliseconds: next - 1).focus)
            instant = next
        }
    }
}

// MARK: - The partition's timers

extension FocusScheduleTests {
    static func changelog(_ state: inout PartitionState) -> [([UInt8], [UInt8]?)] {
        var log: [([UInt8], [UInt8]?)] = []
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
        return log
    }

    static func restored(_ log: [([UInt8], [UInt8]?)]) throws -> PartitionState {
        var state = PartitionState()
        for (key, value) in log { try state.restore(key: key, value: value) }
        state.finishRestore()
        return state
    }

    @Test(
        "a user's next transition is a timer of the partition: set by a decision, due at its instant, committed, restored, rolled back"
    )
    func timers() throws {
        var compiler = FocusContextCompiler()
        let context = try compiler.compile(Self.workAndSleep())
        var state = PartitionState()
        let evening = Self.at("2026-11-24T19:00:00Z")
        _ = state.decide(
            NotificationEvent(kind: .notification, id: "n1", userID: "u", appID: "news"),
            lookup: .available(context), defaultRateLimits: .none, repeatedWindowMilliseconds: 180_000,
            nowMilliseconds: evening, sentAtMilliseconds: evening)
        let sleepStarts = Self.at("2026-11-24T21:00:00Z")
        #expect(state.pendingTransitions == 1 && state.nextTransitionAt() == sleepStarts)
        #expect(state.dueTransitions(atMilliseconds: sleepStarts - 1, limit: 10).isEmpty)
        let log = Self.changelog(&state)
        #expect(log.contains { $0.0 == [0, UInt8(ascii: "T")] + Array("u".utf8) }, "a T record for the timer")

        // Restored from the changelog, as written: the timer is there.
        var restored = try Self.restored(log)
        #expect(restored.nextTransitionAt() == sleepStarts)

        // Due: taken once; an abort puts it back; done and committed, the next one is watched.
        #expect(restored.dueTransitions(atMilliseconds: sleepStarts, limit: 10).map(\.userID) == ["u"])
        #expect(restored.dueTransitions(atMilliseconds: sleepStarts, limit: 10).isEmpty, "not twice")
        restored.rollback()
        #expect(restored.dueTransitions(atMilliseconds: sleepStarts, limit: 10).map(\.userID) == ["u"])
        _ = restored.recompute(userID: "u", context: context, nowMilliseconds: sleepStarts)
        let sleepEnds = Self.at("2026-11-25T06:00:00Z")
        #expect(restored.nextTransitionAt() == sleepEnds)
        let later = Self.changelog(&restored)

        // After a restart from both logs, the fired transition is not due again: the next one is.
        var again = try Self.restored(log + later)
        #expect(again.nextTransitionAt() == sleepEnds)
        #expect(again.dueTransitions(atMilliseconds: sleepEnds - 1, limit: 10).isEmpty)
        // A context without transitions clears the timer (a tombstone in the changelog).
        _ = again.recompute(userID: "u", context: nil, nowMilliseconds: sleepStarts + 1)
        #expect(again.pendingTransitions == 0)
        let cleared = Self.changelog(&again)
        #expect(cleared.contains { $0.0 == [0, UInt8(ascii: "T")] + Array("u".utf8) && $0.1 == nil })
        #expect(try Self.restored(log + later + cleared).pendingTransitions == 0)
    }

    @Test("due timers come out earliest first, at most the limit per call")
    func timerOrderAndLimit() throws {
        var state = PartitionState()
        for (index, at) in [Int64(50), 10, 40, 20, 30].enumerated() {
            _ = state.apply(
                NotificationEvent(kind: .notification, id: "n", userID: "u\(index)", appID: "a"),
                lookup: .available(nil),
                nowMilliseconds: 0
            )
            state.watchTransition(userID: "u\(index)", at: at)
        }
        #expect(state.pendingTransitions == 5)
        #expect(state.dueTransitions(atMilliseconds: 45, limit: 3).map(\.at) == [10, 20, 30])
        #expect(state.dueTransitions(atMilliseconds: 45, limit: 3).map(\.at) == [40])
        #expect(state.pendingTransitions == 1 && state.nextTransitionAt() == 50)
    }
}

// MARK: - Focus status

extension FocusScheduleTests {
    @Test("the status changes once at each transition, says until when, is committed and restored, never repeated")
    func status() throws {
        var compiler = FocusContextCompiler()
        var document = Self.workAndSleep()
        document.foci["Work"]?.sharesStatus = false
        let context = try compiler.compile(document)
        var state = PartitionState()
        func decide(_ id: String, _ instant: Int64) {
            _ = state.decide(
                NotificationEvent(kind: .notification, id: id, userID: "u", appID: "news"),
                lookup: .available(context), defaultRateLimits: .none, repeatedWindowMilliseconds: 180_000,
                nowMilliseconds: instant, sentAtMilliseconds: instant)
        }
        decide("n1", Self.at("2026-11-24T19:00:00Z"))
        #expect(state.pendingStatusUpdates.isEmpty, "no Focus, never focused: nothing to say")
        // Within a version, the status changes when the timer fires (the worker then recomputes).
        #expect(state.nextTransitionAt() == Self.at("2026-11-24T21:00:00Z"))
        // Work does not share its status: still not focused.
        _ = state.recompute(userID: "u", context: context, nowMilliseconds: Self.at("2026-12-01T10:00:00Z"))
        #expect(state.pendingStatusUpdates.isEmpty)
        // Sleep is on: focused until 07:00 Paris time; a decision under the same version says nothing new.
        _ = state.recompute(userID: "u", context: context, nowMilliseconds: Self.at("2026-11-24T21:30:00Z"))
        decide("n4", Self.at("2026-11-24T22:00:00Z"))
        #expect(
            state.pendingStatusUpdates.map(\.status)
                == [FocusStatus(focused: true, until: Self.at("2026-11-25T06:00:00Z"), contextVersion: 7)])
        var log = Self.changelog(&state)
        #expect(log.contains { $0.0 == [0, UInt8(ascii: "F")] + Array("u".utf8) })

        // Restored: the same status is not said again; the end of Sleep is, with sequence 2.
        var restored = try Self.restored(log)
        _ = restored.recompute(userID: "u", context: context, nowMilliseconds: Self.at("2026-11-24T23:00:00Z"))
        #expect(restored.pendingStatusUpdates.isEmpty)
        _ = restored.recompute(userID: "u", context: context, nowMilliseconds: Self.at("2026-11-25T06:00:00Z"))
        #expect(restored.pendingStatusUpdates.map(\.status.focused) == [false])
        #expect(restored.pendingStatusUpdates.map(\.sequence) == [2])
        // An abort forgets it; the next try says it again.
        restored.rollback()
        #expect(restored.pendingStatusUpdates.isEmpty)
        _ = restored.recompute(userID: "u", context: context, nowMilliseconds: Self.at("2026-11-25T06:00:00Z"))
        #expect(restored.pendingStatusUpdates.map(\.sequence) == [2])
        log += Self.changelog(&restored)
        #expect(try Self.restored(log).publishedStatus(userID: "u")?.focused == false)
    }

    @Test("a status record is JSON without the Focus's name")
    func statusRecord() {
        var bytes: [UInt8] = []
        FocusStatusUpdate(
            userID: "u-1", status: FocusStatus(focused: true, until: 1_800_000_000_000, contextVersion: 3), sequence: 4,
            updatedAtMilliseconds: 1_799_999_999_000
        ).writeJSON(into: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"userId":"u-1","focused":true,"until":"2027-01-15T08:00:00.000Z","contextVersion":3,"sequence":4,"updatedAt":"2027-01-15T07:59:59.000Z"}"#
        )
    }
}
