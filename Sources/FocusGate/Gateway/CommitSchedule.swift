/// When a worker's next commit is due.
///
/// One `commit.intervalMs` after the last commit ended, or sooner: the commit covering the first
/// record taken after a commit starts early by the record's age when taken (by its timestamp) and
/// by what commits have taken lately (a moving average), so that it ends about one interval after
/// the record was produced. Exactly-once, that is when the record's outputs become readable. A
/// worker that keeps up (it waited for records a tenth of an interval or more before the last
/// commit, and the record is younger than an interval) starts it at most half an interval early;
/// a saturated worker, or one behind (a backlog, whose records have missed their interval
/// already), at most a tenth, so that it does not commit much more often, each commit costing
/// time it lacks.
///
/// Exactly-once, a worker also writes the state's changes so far into the open transaction a few
/// times an interval (``GatewayWorker/stageChanges()``): a stage is due a ``stages``-th of the
/// interval after the last commit or stage, unless the commit itself comes within half that.
struct CommitSchedule {
    let interval: Duration
    /// How many parts an interval's changes are written in (1: all at the commit).
    let stages: Int
    /// When the next commit is due.
    private(set) var due: ContinuousClock.Instant
    /// When the changes so far are next written, before the commit.
    private(set) var stageDue: ContinuousClock.Instant
    /// What commits take, smoothed.
    private(set) var commitDuration: Duration = .zero
    /// Whether the loop waited for records a tenth of an interval or more before the last commit.
    private(set) var keepsUp = false
    /// How long the loop has waited for records since the last commit.
    private var waitedSinceCommit: Duration = .zero
    private var hasRecords = false

    init(interval: Duration, stages: Int = 1, now: ContinuousClock.Instant) {
        self.interval = interval
        self.stages = max(1, stages)
        self.due = now + interval
        self.stageDue = now + interval / self.stages
    }

    /// Whether the changes so far are to be written at `now`: a stage is due, and the commit
    /// not within half a stage.
    func isStageDue(at now: ContinuousClock.Instant) -> Bool {
        self.stages > 1 && now >= self.stageDue && self.due - now > self.interval / (2 * self.stages)
    }

    /// The changes so far were written at `instant`.
    mutating func staged(at instant: ContinuousClock.Instant) {
        self.stageDue = instant + self.interval / self.stages
    }

    /// Records were taken at `instant`, the first of them `age` old: the first since the commit
    /// brings the commit forward.
    mutating func recordsTaken(at instant: ContinuousClock.Instant, age: Duration) {
        guard !self.hasRecords else { return }
        self.hasRecords = true
        let age = max(age, .zero)  // a producer's clock ahead of this one: a new record
        let bound = self.keepsUp && age < self.interval ? self.interval / 2 : self.interval / 10
        self.due = min(self.due, instant + self.interval - min(age + self.commitDuration, bound))
    }

    /// The loop waited `duration` for records (none came, or they came after it).
    mutating func waited(_ duration: Duration) {
        self.waitedSinceCommit += duration
    }

    /// A commit ran from `started` to `ended`.
    mutating func committed(started: ContinuousClock.Instant, ended: ContinuousClock.Instant) {
        self.commitDuration = (self.commitDuration * 3 + min(ended - started, self.interval)) / 4
        self.keepsUp = self.waitedSinceCommit >= self.interval / 10
        self.waitedSinceCommit = .zero
        self.hasRecords = false
        self.due = ended + self.interval
        self.stageDue = ended + self.interval / self.stages
    }
}
