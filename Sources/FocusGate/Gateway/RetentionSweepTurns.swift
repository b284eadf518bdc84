/// How the retention's sweep shares a step's looks among a worker's partitions: a step looks at
/// a fixed number of users in all, so that its cost does not grow with the partitions a worker
/// holds. The partitions take turns: a turn is as many looks as the partition has users (its own
/// cursor goes around it), spread over as many steps as it takes, then the next partition's.
struct RetentionSweepTurns: Sendable {
    /// The partition whose turn it is (the first held one at or after it).
    private(set) var current: Int32 = 0
    /// Looks given to ``current`` in its turn so far.
    private var given = 0

    /// One step's looks: `budget` in all, each partition at most once and at most what is left
    /// of its turn. `held` is sorted by partition, with each one's number of users.
    mutating func step(budget: Int, held: [(partition: Int32, users: Int)]) -> [(partition: Int32, looks: Int)] {
        guard !held.isEmpty else { return [] }
        var index = held.firstIndex { $0.partition >= self.current } ?? 0
        if held[index].partition != self.current { self.given = 0 }  // that partition went
        var left = budget
        var looks: [(partition: Int32, looks: Int)] = []
        for _ in 0..<held.count where left > 0 {
            let (partition, users) = held[index]
            let count = min(left, max(users - self.given, 0))
            left -= count
            if count > 0 { looks.append((partition, count)) }
            if self.given + count < users {
                // The budget ran out within this partition's turn: the next step goes on with it.
                self.current = partition
                self.given += count
                break
            }
            index = (index + 1) % held.count
            self.current = held[index].partition
            self.given = 0
        }
        return looks
    }
}
