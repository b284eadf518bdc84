import Foundation

// MARK: - Which Focus is on when

/// Which Focus is on at an instant, and why.
public struct FocusState: Sendable, Hashable {
    /// Why the state is what it is.
    public struct Cause: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { self.rawValue }

        /// Set (or turned off) by hand: the document's `focus`.
        public static let manual = Cause(rawValue: "manual")
        /// A schedule's window.
        public static let schedule = Cause(rawValue: "schedule")
        /// The manual Focus passed its `expiresAt`, and no schedule has turned one on since.
        public static let expired = Cause(rawValue: "expiry")
        /// Nothing turns a Focus on.
        public static let none = Cause(rawValue: "none")
    }

    /// The Focus that is on; `nil`: none.
    public var focus: String?
    /// Why.
    public var cause: Cause
    /// When this state began, when the context says (Unix ms).
    public var since: Int64?
    /// The next instant the state may change: a schedule boundary, the end of the manual
    /// override, or the expiry (Unix ms); `nil`: never.
    public var until: Int64?

    /// Creates a state.
    public init(focus: String?, cause: Cause, since: Int64? = nil, until: Int64? = nil) {
        self.focus = focus
        self.cause = cause
        self.since = since
        self.until = until
    }
}

/// A context's Focus over time (docs/focus-schedules.md): the manual Focus (the document's
/// `focus`, `focusSetAt`, `expiresAt`) and the schedules' windows in the user's time zone.
///
/// Without schedules it is the manual Focus alone, as contexts always were: on until
/// `expiresAt`. With schedules, the window that started last among those open is on; a manual
/// Focus (or a manual "off") set at `focusSetAt` wins until the next schedule boundary after it.
public struct FocusTimeline: Sendable {
    /// A schedule, compiled: the days its windows start on as a bit per weekday (bit 0 Monday).
    struct Window: Sendable, Hashable {
        let focus: String
        let days: UInt8
        let startMinute: Int
        let endMinute: Int
    }

    let clock: ZoneClock?
    let windows: [Window]
    let manualFocus: String?
    /// When the manual state was set; `nil` with schedules: there is no manual state.
    let manualSince: Int64?
    /// The first schedule boundary after ``manualSince``: the manual state ends there.
    let manualEnd: Int64
    /// The last millisecond the manual Focus is on (`expiresAt`); `Int64.max`: no expiry.
    let expiresAt: Int64

    /// A timeline of a manual Focus alone (a context without schedules).
    init(focus: String?, expiresAt: Int64) {
        self.clock = nil
        self.windows = []
        self.manualFocus = focus
        self.manualSince = nil
        self.manualEnd = .max
        self.expiresAt = expiresAt
    }

    /// A timeline with schedules in the zone of `clock`.
    init(clock: ZoneClock, schedules: [FocusContext.Schedule], focus: String?, focusSetAt: Int64?, expiresAt: Int64) {
        self.clock = clock
        self.windows = schedules.map { schedule in
            Window(
                focus: schedule.focus, days: schedule.days.reduce(0) { $0 | UInt8(1) << UInt8($1.number) },
                startMinute: schedule.start.minuteOfDay, endMinute: schedule.end.minuteOfDay)
        }
        self.manualFocus = focus
        self.manualSince = focusSetAt
        self.expiresAt = expiresAt
        var manualEnd = Int64.max
        if let focusSetAt {
            manualEnd = Self.nextBoundary(after: focusSetAt, clock: clock, windows: self.windows) ?? .max
        }
        self.manualEnd = manualEnd
    }

    /// The timeline of a (validated) context document.
    public init(_ context: FocusContext) {
        let expiresAt = context.expiresAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.down)) } ?? .max
        guard !context.schedules.isEmpty, let zone = context.timeZone, let clock = ZoneClock(identifier: zone) else {
            self.init(focus: context.focus, expiresAt: expiresAt)
            return
        }
        self.init(
            clock: clock, schedules: context.schedules, focus: context.focus,
            focusSetAt: context.focusSetAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.down)) },
            expiresAt: expiresAt)
    }

    /// The state at `instant`.
    public func state(at instant: Int64) -> FocusState {
        guard let clock = self.clock, !self.windows.isEmpty else {
            guard let focus = self.manualFocus else { return FocusState(focus: nil, cause: .none) }
            if instant <= self.expiresAt {
                return FocusState(
                    focus: focus, cause: .manual, until: self.expiresAt == .max ? nil : self.expiresAt + 1)
            }
            return FocusState(focus: nil, cause: .expired, since: self.expiresAt + 1)
        }
        let boundary = Self.nextBoundary(after: instant, clock: clock, windows: self.windows)
        func until(_ limits: Int64?...) -> Int64? {
            limits.compactMap { $0 }.filter { $0 > instant }.min()
        }
        if let since = self.manualSince, instant >= since, instant < self.manualEnd {
            let end = self.manualEnd == .max ? nil : self.manualEnd
            guard let focus = self.manualFocus else {
                return FocusState(focus: nil, cause: .manual, since: since, until: until(end, boundary))
            }
            if instant <= self.expiresAt {
                let expiry: Int64? = self.expiresAt == .max ? nil : self.expiresAt + 1
                return FocusState(focus: focus, cause: .manual, since: since, until: until(end, expiry, boundary))
            }
        }
        let setAt = self.manualSince.flatMap { $0 > instant ? $0 : nil }
        if let open = self.openWindow(at: instant, clock: clock) {
            return FocusState(focus: open.focus, cause: .schedule, since: open.start, until: until(boundary, setAt))
        }
        if self.manualFocus != nil, let since = self.manualSince, self.expiresAt != .max,
            instant > self.expiresAt, self.expiresAt >= since, self.expiresAt < self.manualEnd, instant < self.manualEnd
        {
            return FocusState(focus: nil, cause: .expired, since: self.expiresAt + 1, until: until(boundary, setAt))
        }
        return FocusState(focus: nil, cause: .none, until: until(boundary, setAt))
    }

    /// The Focus on at `instant`, for a decision.
    public func focus(at instant: Int64) -> String? {
        guard let clock = self.clock, !self.windows.isEmpty else {
            return instant <= self.expiresAt ? self.manualFocus : nil
        }
        if let since = self.manualSince, instant >= since, instant < self.manualEnd,
            self.manualFocus == nil || instant <= self.expiresAt
        {
            return self.manualFocus
        }
        return self.openWindow(at: instant, clock: clock)?.focus
    }

    /// The window open at `instant` that started last (the first listed of those that started
    /// at once), with its start.
    private func openWindow(at instant: Int64, clock: ZoneClock) -> (focus: String, start: Int64)? {
        let today = clock.day(of: instant)
        var open: (focus: String, start: Int64)?
        for window in self.windows {
            // A window lasts less than a day, so the one open now started today, yesterday or
            // (across a daylight-saving change) the day before.
            for day in (today - 2)...today where window.starts(on: day) {
                let (start, end) = window.bounds(on: day, clock: clock)
                if start <= instant && instant < end && (open == nil || start > open!.start) {
                    open = (window.focus, start)
                }
            }
        }
        return open
    }

    /// The first window start or end strictly after `instant`; `nil` without windows.
    static func nextBoundary(after instant: Int64, clock: ZoneClock, windows: [Window]) -> Int64? {
        let today = clock.day(of: instant)
        var next: Int64?
        for window in windows {
            for day in (today - 2)...(today + 8) where window.starts(on: day) {
                let (start, end) = window.bounds(on: day, clock: clock)
                for boundary in [start, end] where boundary > instant && boundary < (next ?? .max) {
                    next = boundary
                }
            }
        }
        return next
    }
}

extension FocusTimeline.Window {
    func starts(on day: Int64) -> Bool {
        self.days & (1 << UInt8(ZoneClock.weekday(ofDay: day))) != 0
    }

    /// The window that starts on local `day`: its start and end instants.
    func bounds(on day: Int64, clock: ZoneClock) -> (start: Int64, end: Int64) {
        let midnight = day * ZoneClock.dayMilliseconds
        let endDay = self.endMinute <= self.startMinute ? midnight + ZoneClock.dayMilliseconds : midnight
        return (
            clock.instant(ofLocal: midnight + Int64(self.startMinute) * 60_000),
            clock.instant(ofLocal: endDay + Int64(self.endMinute) * 60_000)
        )
    }
}
