import FocusGateCore

/// The records read and not yet closed by their commit's marker, their bytes copied into one
/// reused buffer (the consumer's records are gone after each batch; a group can span batches).
struct ChangelogGroup {
    private var bytes: [UInt8] = []
    /// Each record's key in `bytes`, its value right after it (`valueCount` -1: a tombstone),
    /// and the input offset its commit is as of (`nil`: a record written before records said
    /// so, which belongs to the next marker).
    private var records: [Record] = []
    /// Records skipped as past the committed offset.
    var skipped = 0
    /// Records skipped as behind state already applied (written late).
    var skippedLate = 0
    /// Records a marker of an earlier offset came after: another commit's marker (a
    /// transaction that aborted before its own marker was sent, then the next writer's).
    var interleaved = 0
    var unreadable = 0
    /// The input offset of the newest state applied so far.
    private var appliedThrough = Int64.min
    /// The records a marker closes: the offset each is as of, and where it is in ``records``.
    private var order: [(asOf: Int64, index: Int)] = []

    private struct Record {
        var keyStart: Int
        var keyCount: Int
        var valueCount: Int
        var asOf: Int64?
        /// A marker of an earlier offset came after it (counted once in ``interleaved``).
        var waited = false
    }

    /// Records waiting for their marker.
    var count: Int { self.records.count }

    mutating func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, asOf: Int64?) {
        self.records.append(
            Record(keyStart: self.bytes.count, keyCount: key.count, valueCount: value?.count ?? -1, asOf: asOf))
        self.bytes.append(contentsOf: key)
        if let value { self.bytes.append(contentsOf: value) }
    }

    /// Closes what a marker `through` ends: the records as of `through` or an earlier offset
    /// (on a compacted topic, also earlier commits' records whose markers compaction removed),
    /// applied in the order of their offsets and in log order within one. Each commit's
    /// records are applied unless its offsets never committed (past `committed`) or it is
    /// older than state already applied. Records as of a later offset (a transaction that
    /// aborted before its marker was sent, followed by the next writer's commit) keep waiting
    /// for a marker at or past theirs.
    mutating func close(through: Int64, committed: Int64, to state: inout PartitionState) {
        self.order.removeAll(keepingCapacity: true)
        var waiting = false
        var ordered = true
        var previous = Int64.min
        for index in self.records.indices {
            let asOf = self.records[index].asOf ?? through
            guard asOf <= through else {
                waiting = true
                if !self.records[index].waited {
                    self.records[index].waited = true
                    self.interleaved += 1
                }
                continue
            }
            if asOf < previous { ordered = false }
            previous = asOf
            self.order.append((asOf, index))
        }
        // By offset, and within one commit in log order.
        if !ordered { self.order.sort { $0 < $1 } }
        var unreadable = 0
        self.bytes.withUnsafeBytes { bytes in
            var start = 0
            while start < self.order.count {
                let asOf = self.order[start].asOf
                var end = start + 1
                while end < self.order.count && self.order[end].asOf == asOf { end += 1 }
                defer { start = end }
                guard asOf <= committed else {
                    self.skipped += end - start
                    continue
                }
                guard asOf >= self.appliedThrough else {
                    self.skippedLate += end - start
                    continue
                }
                self.appliedThrough = asOf
                for (_, index) in self.order[start..<end] {
                    let record = self.records[index]
                    let valueStart = record.keyStart + record.keyCount
                    let key = UnsafeRawBufferPointer(rebasing: bytes[record.keyStart..<valueStart])
                    let value =
                        record.valueCount < 0
                        ? nil : UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueStart + record.valueCount])
                    do {
                        try state.restore(key: key, value: value)
                    } catch {
                        unreadable += 1
                    }
                }
            }
        }
        self.unreadable += unreadable
        if waiting {
            self.keepWaiting(through: through)
        } else {
            self.records.removeAll(keepingCapacity: true)
            self.bytes.removeAll(keepingCapacity: true)
        }
    }

    /// Drops the records a marker `through` closed, keeping those as of a later offset.
    private mutating func keepWaiting(through: Int64) {
        var bytes: [UInt8] = []
        var records: [Record] = []
        for var record in self.records where (record.asOf ?? through) > through {
            let end = record.keyStart + record.keyCount + max(0, record.valueCount)
            let start = bytes.count
            bytes.append(contentsOf: self.bytes[record.keyStart..<end])
            record.keyStart = start
            records.append(record)
        }
        self.bytes = bytes
        self.records = records
    }
}

/// What a streaming restore applies: each changelog record as it is read, judged by its `as-of`
/// header against the partition's closing marker, found first in the partition's tail
/// (``StateRestorer``). Nothing is buffered but records written before the header existed, which
/// belong to the next marker (a ``ChangelogGroup``): memory beyond the state does not grow with
/// the partition.
///
/// A record is applied when it lies before the partition's last marker, its commit is as of an
/// offset the markers closed (at most the newest marker's, past none of them: a transaction cut
/// short or aborted before its marker) and within the input's committed offset (past it, its
/// offsets never committed), and it is not behind state already applied (written late, by a
/// member that had lost the partition). Processing is deterministic, so a commit that is
/// skipped has its changes in the commits applied around it.
struct ChangelogStream {
    /// The offset of the partition's last commit marker; records after it belong to no commit.
    let lastMarker: Int64
    /// The newest offset a commit is taken as of: the markers' newest, at most the input's
    /// committed offset.
    let through: Int64
    let committed: Int64
    /// Records written before the `as-of` header existed, waiting for their marker.
    private(set) var legacy = ChangelogGroup()
    private var appliedThrough = Int64.min
    private(set) var applied = 0
    /// Records skipped as past the committed offset or not closed by a marker.
    private(set) var skipped = 0
    /// Records skipped as behind state already applied (written late).
    private(set) var skippedLate = 0
    private(set) var unreadable = 0

    /// `closing`: the partition's last marker's offset and the newest offset the markers found
    /// close (`nil`: the partition has no marker, so no commit to take).
    init(closing: (lastMarker: Int64, through: Int64)?, committed: Int64) {
        self.lastMarker = closing?.lastMarker ?? -1
        self.through = min(closing?.through ?? .min, committed)
        self.committed = committed
    }

    /// Takes the record at `offset` (a marker when ``PartitionState/commitMarkerOffset(key:value:)``
    /// says so), in log order.
    mutating func take(
        offset: Int64, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, asOf: Int64?,
        to state: inout PartitionState
    ) {
        if let marker = PartitionState.commitMarkerOffset(key: key, value: value) {
            if self.legacy.count > 0 { self.legacy.close(through: marker, committed: self.committed, to: &state) }
            return
        }
        guard let asOf else { return self.legacy.append(key: key, value: value, asOf: nil) }
        guard offset < self.lastMarker, asOf <= self.through else {
            self.skipped += 1
            return
        }
        guard asOf >= self.appliedThrough else {
            self.skippedLate += 1
            return
        }
        self.appliedThrough = asOf
        do {
            try state.restore(key: key, value: value)
            self.applied += 1
        } catch {
            self.unreadable += 1
        }
    }

    /// Records not applied: skipped, late, or written before the header and never closed.
    var notApplied: Int {
        self.skipped + self.skippedLate + self.legacy.skipped + self.legacy.skippedLate + self.legacy.count
    }
}
