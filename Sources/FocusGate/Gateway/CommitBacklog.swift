import FocusGateCore
import FocusGateKafka

/// At-least-once: the records a commit wrote and has not produced yet — its badge updates,
/// status, summaries, changelog records and commit markers — produced a slice per loop turn
/// between batches (``GatewayWorker/produceBacklogSlice()``) instead of all at once while the
/// records arriving meanwhile wait. Exactly-once: a stage's changelog records and markers
/// (``GatewayWorker/stageChanges()``), produced the same way into the open transaction, whose
/// commit produces what is left of them first.
///
/// The changelog's records are encoded when the commit takes them (the state moves on after it);
/// badge updates are kept as values and encoded when produced. Records come out in the order
/// they were added: a partition's commit marker after its changelog records, and a commit's
/// records before any record of the next commit on the same topic (every commit produces what
/// is left of the one before it first). All of them carry the delivery id of the interval they
/// belong to (``IntervalLedger``), so that its offsets go to the group only once they too are
/// acknowledged.
struct CommitBacklog {
    /// The topic a record goes to, resolved against the worker's current ``GatewayOutputs``.
    enum Topic: UInt8 {
        case badges, status, summaries, state
    }

    private struct Record {
        /// What is produced: a key and value in ``bytes`` (no value: a tombstone), or a badge
        /// update of ``badges``, encoded when produced.
        enum Payload {
            case bytes(key: Range<Int>, value: Range<Int>?)
            case badge(Int)
        }

        var topic: Topic
        /// `nil` for the partitioner's choice by key.
        var partition: Int32?
        var payload: Payload
        /// The position in ``asOfValues`` of its `as-of` header's value, if it has one.
        var asOf: Int?
        /// `nil` for the producer's time.
        var timestamp: Int64?
    }

    /// The delivery id the records are produced with.
    var deliveryID: UInt64 = 0
    private var records: [Record] = []
    /// The next record to produce.
    private var cursor = 0
    private var bytes: [UInt8] = []
    private var badges: [BadgeUpdate] = []
    private var asOfValues: [[UInt8]] = []
    /// The headers of the records being produced (an `as-of` header or none), and which `as-of`
    /// value they hold.
    private var headers = KafkaHeaderBuffer()
    private var headersAsOf: Int?
    /// A badge update's key and value, encoded in place when it is produced.
    private var badgeKey: [UInt8] = []
    private var badgeValue: [UInt8] = []

    /// Whether every record added has been produced.
    var isEmpty: Bool { self.cursor == self.records.count }

    /// Records added and not produced yet.
    var count: Int { self.records.count - self.cursor }

    /// When the records added so far began to be produced, and when all of them should be.
    private var pace: (start: ContinuousClock.Instant, end: ContinuousClock.Instant)?

    /// Spreads the records added so far over `start` to `end`: ``recordsDue(at:)`` says how many
    /// of them a loop turn produces.
    mutating func schedule(from start: ContinuousClock.Instant, until end: ContinuousClock.Instant) {
        self.pace = (start, end)
    }

    /// How many records a loop turn at `now` produces: those the schedule has due by then (in
    /// proportion to the time gone), at least `minimum`: however often the loop turns, the
    /// records are gone by the schedule's end and each turn produces about as much as the time
    /// since the last one.
    func recordsDue(at now: ContinuousClock.Instant, minimum: Int) -> Int {
        guard let pace, now < pace.end else { return self.count }
        let share = (now - pace.start) / (pace.end - pace.start)
        let due = Int((Double(self.records.count) * max(0, share)).rounded(.up)) - self.cursor
        return min(self.count, max(minimum, due))
    }

    /// Adds badge updates (`notifications.badges`, keyed `userId/appId`), encoded when produced.
    mutating func appendBadges(_ updates: [BadgeUpdate]) {
        for update in updates {
            self.records.append(Record(topic: .badges, payload: .badge(self.badges.count)))
            self.badges.append(update)
        }
    }

    /// Notes the value of the `as-of` header that changelog records added after it carry
    /// (``append(_:partition:key:value:asOf:timestamp:)``); returns its number.
    mutating func addAsOf(_ value: [UInt8]) -> Int {
        self.asOfValues.append(value)
        return self.asOfValues.count - 1
    }

    /// Adds a record whose key and value are copied now.
    ///
    /// - Parameters:
    ///   - partition: The partition; `nil` for the partitioner's choice by key.
    ///   - value: The value; `nil` is a tombstone.
    ///   - asOf: The number of its `as-of` header's value (``addAsOf(_:)``), if it has one.
    ///   - timestamp: The record's timestamp; `nil` for the producer's time.
    mutating func append(
        _ topic: Topic, partition: Int32?, key: [UInt8], value: [UInt8]?, asOf: Int? = nil, timestamp: Int64? = nil
    ) {
        let keyStart = self.bytes.count
        self.bytes.append(contentsOf: key)
        let keyEnd = self.bytes.count
        var valueRange: Range<Int>?
        if let value {
            self.bytes.append(contentsOf: value)
            valueRange = keyEnd..<self.bytes.count
        }
        self.records.append(
            Record(
                topic: topic, partition: partition, payload: .bytes(key: keyStart..<keyEnd, value: valueRange),
                asOf: asOf, timestamp: timestamp))
    }

    /// Produces the next records, at most `limit` of them, with ``deliveryID``.
    ///
    /// - Returns: How many were produced.
    /// - Throws: ``KafkaError`` when the producer refuses one (its queue stays full, a fatal
    ///   error): that record and those after it stay in the backlog.
    @discardableResult
    mutating func produce(upTo limit: Int, through outputs: GatewayOutputs) throws(KafkaError) -> Int {
        let end = self.cursor + min(limit, self.count)
        let start = self.cursor
        while self.cursor < end {
            let record = self.records[self.cursor]
            if record.asOf != self.headersAsOf {
                self.headers.removeAll()
                if let asOf = record.asOf {
                    self.headers.append(name: PartitionState.asOfHeader, value: self.asOfValues[asOf])
                }
                self.headersAsOf = record.asOf
            }
            let topic = Self.handle(record.topic, in: outputs)
            switch record.payload {
            case .badge(let position):
                let update = self.badges[position]
                update.writeKey(into: &self.badgeKey)
                update.writeJSON(into: &self.badgeValue)
                try outputs.producer.produce(
                    topic: topic, partition: record.partition, key: self.badgeKey, value: self.badgeValue,
                    headers: self.headers, timestamp: record.timestamp, deliveryID: self.deliveryID)
            case .bytes(let key, let value):
                let result = self.bytes.withUnsafeBytes { bytes in
                    Result { () throws(KafkaError) in
                        try outputs.producer.produce(
                            topic: topic, partition: record.partition,
                            key: UnsafeRawBufferPointer(rebasing: bytes[key]),
                            value: value.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) }, headers: self.headers,
                            timestamp: record.timestamp, deliveryID: self.deliveryID)
                    }
                }
                try result.get()
            }
            self.cursor += 1
        }
        let produced = self.cursor - start
        self.compactIfProduced()
        return produced
    }

    /// Forgets every record not produced yet (their producer was given up, or their commit
    /// failed); returns how many there were.
    @discardableResult
    mutating func removeAll() -> Int {
        let left = self.count
        self.cursor = self.records.count
        self.compactIfProduced()
        return left
    }

    /// Once everything was produced, the storage is emptied (its capacity kept) for the next commit.
    private mutating func compactIfProduced() {
        guard self.isEmpty, !self.records.isEmpty else { return }
        self.records.removeAll(keepingCapacity: true)
        self.bytes.removeAll(keepingCapacity: true)
        self.badges.removeAll(keepingCapacity: true)
        self.asOfValues.removeAll(keepingCapacity: true)
        self.cursor = 0
        self.headers.removeAll()
        self.headersAsOf = nil
        self.pace = nil
    }

    private static func handle(_ topic: Topic, in outputs: GatewayOutputs) -> KafkaTopic {
        switch topic {
        case .badges: outputs.badges
        case .status: outputs.status
        case .summaries: outputs.summaries
        case .state: outputs.state
        }
    }
}
