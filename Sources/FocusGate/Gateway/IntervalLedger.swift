import FocusGateKafka

/// At-least-once: the records of each commit interval apart, so that the interval's input offsets
/// go to the group once the cluster has acknowledged everything produced in it, learned from the
/// producer's acknowledgement counters (``KafkaAcknowledgements``) while the loop goes on, instead
/// of a flush that stops it.
///
/// Every record of an interval is produced with the interval's delivery id. Ids are counted in
/// slots (`id % KafkaAcknowledgements.slotCount`): an id is taken only when the records of the
/// id that last used its slot are all acknowledged (written or failed), so that no count ever
/// mixes two intervals. Ids run up; one whose slot is still busy (an interval given up by an
/// abort whose records are still in flight) is passed over. When every slot is busy (records
/// outstanding for thousands of intervals), ``current`` is 0: the interval's records are not
/// counted and its commit waits for a flush, as it would without the counters.
struct IntervalLedger {
    /// The delivery id of the interval being produced; 0 when it is not counted.
    private(set) var current: UInt64 = 0
    /// Records produced in the interval so far.
    var produced = 0
    /// Per slot, the id that last took it and the records produced with it.
    private var occupants: [(id: UInt64, produced: Int)]
    /// The id tried first by the next ``advance(_:)``.
    private var next: UInt64 = 1

    /// A ledger whose first interval takes id 1, when `counting`; one that counts nothing
    /// (exactly-once, whose transactions say what is written) otherwise.
    init(counting: Bool, acknowledgements: KafkaAcknowledgements) {
        self.occupants = Array(repeating: (0, 0), count: counting ? KafkaAcknowledgements.slotCount : 0)
        if counting { self.advance(acknowledgements) }
    }

    /// Whether an interval's `produced` records are all acknowledged, `failed` of them for good.
    static func isAcknowledged(_ counts: (delivered: Int, failed: Int), produced: Int) -> Bool {
        counts.delivered + counts.failed >= produced
    }

    /// Ends the interval being produced and starts the next: its id is the next one whose slot
    /// is free (reset to zero), or 0 when none is. Returns the ended interval's id and count.
    @discardableResult
    mutating func advance(_ acknowledgements: KafkaAcknowledgements) -> (id: UInt64, produced: Int) {
        let ended = (id: self.current, produced: self.produced)
        guard !self.occupants.isEmpty else {
            self.produced = 0
            return ended
        }
        if ended.id != 0 {
            self.occupants[Self.slot(ended.id)] = ended
        }
        self.current = 0
        self.produced = 0
        for _ in 0..<KafkaAcknowledgements.slotCount {
            let id = self.next
            self.next += 1
            let occupant = self.occupants[Self.slot(id)]
            if occupant.id != 0
                && !Self.isAcknowledged(acknowledgements.counts(of: occupant.id), produced: occupant.produced)
            {
                continue
            }
            acknowledgements.reset(id)
            self.occupants[Self.slot(id)] = (id, 0)
            self.current = id
            break
        }
        return ended
    }

    /// Takes back `count` records counted for interval `id` that were never produced (a commit
    /// whose records failed before all were), so that its slot frees once the others are
    /// acknowledged.
    mutating func withdraw(_ count: Int, from id: UInt64) {
        guard count > 0, id != 0, !self.occupants.isEmpty else { return }
        if id == self.current {
            self.produced -= count
        } else if self.occupants[Self.slot(id)].id == id {
            self.occupants[Self.slot(id)].produced -= count
        }
    }

    private static func slot(_ id: UInt64) -> Int {
        Int(id % UInt64(KafkaAcknowledgements.slotCount))
    }
}
