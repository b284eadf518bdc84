/// When a worker's next commit is due.
///
/// One `commit.intervalMs` after the last commit ended, or sooner: the commit covering the first
/// record taken after a commit starts early by the record's age when taken (by its timestamp) and
/// by what commits have taken lately (a moving average), together at most a tenth of the interval,
/// so that it ends about one interval after the record was produced. Exactly-once, that is when the
/// record's outputs become readable. The bound keeps a loaded worker, whose records are old when
/// taken and whose commits are long, from committing much more often.
struct CommitSchedule {
    let interval: Duration
    /// When the next commit is due.
    private(set) var due: ContinuousClock.Instant
    /// What commits take, smoothed.
    private(set) var commitDuration: Duration = .zero
    private var hasRecords = false

    init(interval: Duration, now: ContinuousClock.Instant) {
        self.interval = interval
        self.due = now + interval
    }

    /// Records were taken at `instant`, the first of them `age` old: the first since the commit
    /// brings the commit forward.
    mutating func recordsTaken(at instant: ContinuousClock.Instant, age: Duration) {
        guard !self.hasRecords else { return }
        self.hasRecords = true
        let early = min(max(age, .zero) + self.commitDuration, self.interval / 10)
        self.due = min(self.due, instant + self.interval - early)
    }

    /// A commit ran from `started` to `ended`.
    mutating func committed(started: ContinuousClock.Instant, ended: ContinuousClock.Instant) {
        self.commitDuration = (self.commitDuration * 3 + min(ended - started, self.interval)) / 4
        self.hasRecords = false
        self.due = ended + self.interval
    }
}
