/// How long a worker pauses before it replays after an abort.
///
/// The first abort after a commit replays at once: its cause (a broker restart, an output refused
/// once) has usually passed. Each further abort without a commit in between pauses twice as long
/// as the one before, from `initial` up to `maximum`; a commit ends the run, and so does a
/// rebalance: an abort the group's rebalancing caused is resolved by serving the rebalance, which
/// a paused worker would delay (the worker does not pause for those).
/// A cause that fails every attempt (an output topic the broker refuses records for, a missing
/// permission) then costs one replay per `maximum` instead of a busy loop of replays that floods
/// the log and the brokers, and the pause stays well below the consumer's
/// `max.poll.interval.ms`, so the worker keeps its partitions meanwhile.
struct ReplayBackoff {
    /// The pause after the second abort in a row (`commit.replayBackoffMs`).
    let initial: Duration
    /// The longest pause (`commit.replayBackoffMaxMs`).
    let maximum: Duration
    /// Aborts since the last commit.
    private(set) var abortsInARow = 0

    init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// An abort happened: returns how long to pause before replaying.
    mutating func aborted() -> Duration {
        self.abortsInARow += 1
        guard self.abortsInARow > 1, self.initial > .zero else { return .zero }
        var pause = self.initial
        // Doubling stops at the maximum, so a long run never overflows.
        for _ in 2..<self.abortsInARow where pause < self.maximum {
            pause *= 2
        }
        return min(pause, self.maximum)
    }

    /// A commit succeeded, or the group rebalanced: the next abort replays at once.
    mutating func reset() {
        self.abortsInARow = 0
    }
}
