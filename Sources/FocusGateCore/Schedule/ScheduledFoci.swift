// MARK: - The Focus in force, for decisions

/// A compiled context's schedules: each Focus's compiled configuration, the timeline that says
/// which is on, and that answer worked out ahead for a horizon, so that the record loop looks it
/// up (a binary search) instead of converting local times per notification.
final class ScheduledFoci: Sendable {
    /// How far ahead of its `horizonFrom` the answer is worked out.
    static let horizonMilliseconds: Int64 = 2 * ZoneClock.dayMilliseconds

    let timeline: FocusTimeline
    let configurations: [String: CompiledFocusContext]
    /// The context in force when no Focus is on.
    let off: CompiledFocusContext
    /// Where the Focus in force may change within the horizon, ascending; ``segmentFoci``
    /// holds the Focus on from each, and ``segmentConfigurations`` the context in force (looked
    /// up here once, not by the Focus's name per decision). Empty without a horizon.
    private let segmentStarts: [Int64]
    private let segmentFoci: [String?]
    private let segmentConfigurations: [CompiledFocusContext]
    /// The end of the horizon: the last segment holds until here.
    private let horizonEnd: Int64

    init(
        timeline: FocusTimeline, configurations: [String: CompiledFocusContext], off: CompiledFocusContext,
        horizonFrom: Int64?
    ) {
        self.timeline = timeline
        self.configurations = configurations
        self.off = off
        var starts: [Int64] = []
        var foci: [String?] = []
        var end = Int64.min
        if let horizonFrom {
            end = horizonFrom + Self.horizonMilliseconds
            var instant = horizonFrom
            while instant < end {
                let state = timeline.state(at: instant)
                starts.append(instant)
                foci.append(state.focus)
                guard let until = state.until else {
                    end = .max
                    break
                }
                instant = until
            }
        }
        self.segmentStarts = starts
        self.segmentFoci = foci
        self.segmentConfigurations = foci.map { focus in focus.flatMap { configurations[$0] } ?? off }
        self.horizonEnd = end
    }

    /// The Focus on at `instant`.
    func focus(at instant: Int64) -> String? {
        guard let segment = self.segment(of: instant) else { return self.timeline.focus(at: instant) }
        return self.segmentFoci[segment]
    }

    /// The context in force at `instant`.
    func configuration(at instant: Int64) -> CompiledFocusContext {
        if let segment = self.segment(of: instant) { return self.segmentConfigurations[segment] }
        guard let focus = self.timeline.focus(at: instant) else { return self.off }
        return self.configurations[focus] ?? self.off
    }

    /// The first instant after `instant` at which the Focus in force may change.
    func nextTransition(after instant: Int64) -> Int64? {
        if let segment = self.segment(of: instant), segment + 1 < self.segmentStarts.count {
            return self.segmentStarts[segment + 1]
        }
        return self.timeline.state(at: instant).until
    }

    /// The horizon's segment that holds `instant`, if the horizon covers it.
    private func segment(of instant: Int64) -> Int? {
        guard let first = self.segmentStarts.first, instant >= first, instant < self.horizonEnd else { return nil }
        var low = 0
        var high = self.segmentStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if self.segmentStarts[middle] <= instant { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
