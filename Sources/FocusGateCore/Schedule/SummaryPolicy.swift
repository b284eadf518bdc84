// MARK: - Summaries: whether, and when

/// A context's ``FocusContext/summaries``, compiled: shared by the context and each of its Foci's
/// configurations, so that whichever is in force says whether a silenced notification is kept
/// for summaries.
final class SummaryPolicy: Sendable {
    /// At the end of each Focus period.
    let atFocusEnd: Bool
    /// The summary times; `nil`: none.
    let times: SummaryTimes?

    init(_ settings: FocusContext.Summaries, timeZone: String?) {
        self.atFocusEnd = settings.atFocusEnd
        self.times = SummaryTimes(settings.times, timeZone: timeZone)
    }
}

/// A context's summary times in the user's zone: when the next one comes, and whether an instant
/// is one. Local times follow the schedules' rules across
/// daylight-saving changes (``ZoneClock/instant(ofLocal:)``): a skipped time comes at the end of
/// the gap, a repeated one at its first occurrence.
final class SummaryTimes: Sendable {
    let clock: ZoneClock
    /// Minutes after local midnight, ascending.
    let minutes: [Int64]

    init?(_ times: [FocusContext.LocalTime], timeZone: String?) {
        guard !times.isEmpty, let timeZone, let clock = ZoneClock(identifier: timeZone) else { return nil }
        self.clock = clock
        self.minutes = times.map { Int64($0.minuteOfDay) }.sorted()
    }

    /// The first summary time after `instant`.
    func next(after instant: Int64) -> Int64? {
        let today = self.clock.day(of: instant)
        // Local days ascending and minutes ascending give instants in order: the first later one wins.
        for day in (today - 1)...(today + 2) {
            for minute in self.minutes {
                let at = self.clock.instant(ofLocal: day * ZoneClock.dayMilliseconds + minute * 60_000)
                if at > instant { return at }
            }
        }
        return nil
    }

    /// Whether `instant` is one of the summary times.
    func contains(_ instant: Int64) -> Bool {
        let today = self.clock.day(of: instant)
        for day in (today - 1)...(today + 1) {
            for minute in self.minutes
            where self.clock.instant(ofLocal: day * ZoneClock.dayMilliseconds + minute * 60_000) == instant {
                return true
            }
        }
        return false
    }
}
