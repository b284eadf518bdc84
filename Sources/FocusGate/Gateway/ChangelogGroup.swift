import FocusGateCore

/// Records written before the `as-of` header existed, read and not yet closed by the next
/// commit marker, their bytes copied into one reused buffer (the consumer's records are gone
/// after each batch; a group can span batches). A marker closes every record before it: applied
/// in log order when the marker is within the input's committed offset and not behind a group
/// applied before it, else skipped.
struct ChangelogGroup {
    private var bytes: [UInt8] = []
    /// Each record's key in `bytes`, its value right after it (`valueCount` -1: a tombstone).
    private var records: [(keyStart: Int, keyCount: Int, valueCount: Int)] = []
    /// Records skipped as past the committed offset.
    var skipped = 0
    /// Records skipped as behind state already applied (written late).
    var skippedLate = 0
    var unreadable = 0
    /// The input offset of the newest group applied so far.
    private var appliedThrough = Int64.min

    /// Records waiting for their marker.
    var count: Int { self.records.count }

    mutating func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        self.records.append((self.bytes.count, key.count, value?.count ?? -1))
        self.bytes.append(contentsOf: key)
        if let value { self.bytes.append(contentsOf: value) }
    }

    /// Closes the group with a marker `through`: applied unless its offsets never committed
    /// (past `committed`) or it is older than a group already applied.
    mutating func close(through: Int64, committed: Int64, to state: inout PartitionState) {
        defer {
            self.records.removeAll(keepingCapacity: true)
            self.bytes.removeAll(keepingCapacity: true)
        }
        guard through <= committed else { return self.skipped += self.records.count }
        guard through >= self.appliedThrough else { return self.skippedLate += self.records.count }
        self.appliedThrough = through
        var unreadable = 0
        self.bytes.withUnsafeBytes { bytes in
            for record in self.records {
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
        self.unreadable += unreadable
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
    /// says so), in log order; `writtenAt`: its Kafka timestamp.
    mutating func take(
        offset: Int64, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, asOf: Int64?,
        writtenAt: Int64? = nil, to state: inout PartitionState
    ) {
        if let marker = PartitionState.commitMarkerOffset(key: key, value: value) {
            if self.legacy.count > 0 { self.legacy.close(through: marker, committed: self.committed, to: &state) }
            return
        }
        guard let asOf else { return self.legacy.append(key: key, value: value) }
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
            try state.restore(key: key, value: value, asOf: asOf, writtenAt: writtenAt)
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
