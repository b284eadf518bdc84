// MARK: - Repeated senders: each user's recent senders (docs/focus-semantics.md, People)

/// The senders a user heard from last, for repeated-sender breakthrough: up to
/// ``capacity``, each with the record timestamp of its latest notification (72 bytes). The
/// oldest gives way to a new sender, so the state per user stays bounded.
struct SenderRing {
    static let capacity = 4
    /// 64-bit FNV-1a hashes of the sender ids (of another basis than notification ids').
    var hashes = InlineArray<4, UInt64>(repeating: 0)
    /// Record timestamps (Unix ms); `Int64.min`: an empty place.
    var times = InlineArray<4, Int64>(repeating: .min)
    var user: UInt32
    /// Changed since the last write and listed in the changes once.
    var isDirty = false
    /// Restored from a record of the old form (`S`), which the next write of the ring (`P`)
    /// puts a tombstone on.
    var hasOldFormRecord = false

    init(user: UInt32) {
        self.user = user
    }
}

/// The partition's sender rings: a user's ring is made by the first notification that names a
/// sender, and goes with the user. Its changelog record is the user's `P` (`S`: the form before,
/// still read).
struct SenderRings: UserRecordComponent {
    static let recordKind = UInt8(ascii: "P")
    /// Each time in full: written before ``recordKind``.
    static let olderRecordKinds = [UInt8(ascii: "S")]
    static let name = "sender rings"

    private(set) var rings = UndoableArray<SenderRing>()
    private var ringOfUser = PerUserSlots()
    private var free = FreeSlots()
    private var committedFree = 0
    /// Users whose ring was marked since the commit.
    private var marked: [UInt32] = []

    /// Whether the sender (by ``PartitionState/senderHash(_:)``) sent the user another
    /// notification at most `windowMilliseconds` before `atMilliseconds` (or after it:
    /// producers' clocks differ), by record timestamps, so that a replay decides the same way.
    @inline(__always)
    func isRepeated(user: UInt32, senderHash hash: UInt64, atMilliseconds: Int64, windowMilliseconds: Int64) -> Bool {
        let ring = self.ringOfUser[user]
        guard ring != StateIndex.none else { return false }
        let senders = self.rings[Int(ring)]
        for place in 0..<SenderRing.capacity where senders.times[place] != .min && senders.hashes[place] == hash {
            let gap = atMilliseconds.subtractingReportingOverflow(senders.times[place])
            return !gap.overflow && gap.partialValue.magnitude <= UInt64(max(0, windowMilliseconds))
        }
        return false
    }

    /// Notes a notification from the sender at `atMilliseconds` in the user's ring: its time when
    /// the sender is there (the later of the two), else in an empty place or the oldest's.
    /// Returns whether the user's record was marked by it (the caller lists the change).
    mutating func note(user: UInt32, senderHash hash: UInt64, atMilliseconds: Int64) -> Bool {
        var ring = self.ringOfUser[user]
        if ring == StateIndex.none {
            if let reused = self.free.take() {
                ring = reused
                self.rings.replace(ring, with: SenderRing(user: user))
            } else {
                ring = UInt32(self.rings.count)
                self.rings.append(SenderRing(user: user))
            }
            self.ringOfUser.set(user, to: ring)
        }
        let senders = self.rings[Int(ring)]
        var place = 0
        for candidate in 0..<SenderRing.capacity {
            if senders.times[candidate] != .min && senders.hashes[candidate] == hash {
                place = candidate
                break
            }
            if senders.times[candidate] < senders.times[place] { place = candidate }
        }
        let time = senders.hashes[place] == hash ? max(senders.times[place], atMilliseconds) : atMilliseconds
        guard senders.hashes[place] != hash || senders.times[place] != time else { return false }
        self.rings.modify(ring) { ring in
            ring.hashes[place] = hash
            ring.times[place] = time
            ring.isDirty = true
        }
        guard !senders.isDirty else { return false }
        self.marked.append(user)
        return true
    }

    // MARK: The component

    mutating func writeRecord<E: Error>(
        user: UInt32, userID: String, key: inout [UInt8], value: inout [UInt8],
        _ write: (_ key: [UInt8], _ value: [UInt8]?) throws(E) -> Void
    ) throws(E) {
        let ring = self.ringOfUser[user]
        guard ring != StateIndex.none, self.rings[Int(ring)].isDirty else { return }
        self.rings[Int(ring)].isDirty = false
        if self.rings[Int(ring)].hasOldFormRecord {
            // The record of the old form goes before the new one is written.
            self.rings[Int(ring)].hasOldFormRecord = false
            Self.appendKey(kind: Self.olderRecordKinds[0], userID: userID, to: &key)
            try write(key, nil)
            key.removeAll(keepingCapacity: true)
        }
        Self.appendKey(kind: Self.recordKind, userID: userID, to: &key)
        Self.encode(self.rings[Int(ring)], to: &value)
        try write(key, value)
    }

    /// The value of a user's `P` changelog record: per sender, newest first, its hash (8 bytes,
    /// little-endian) and time: the newest's as a varint of the two's complement, each other's as
    /// its distance below the one before (one to four bytes where a time takes six).
    static func encode(_ senders: SenderRing, to value: inout [UInt8]) {
        var places = InlineArray<4, Int>(repeating: 0)
        var count = 0
        for place in 0..<SenderRing.capacity where senders.times[place] != .min {
            // Insertion by time, newest first: four places at most.
            var at = count
            while at > 0 && senders.times[places[at - 1]] < senders.times[place] {
                places[at] = places[at - 1]
                at -= 1
            }
            places[at] = place
            count += 1
        }
        var previous = Int64.min
        for index in 0..<count {
            let place = places[index]
            withUnsafeBytes(of: senders.hashes[place].littleEndian) { value.append(contentsOf: $0) }
            let time = senders.times[place]
            PartitionState.writeVarint(
                index == 0 ? UInt64(bitPattern: time) : UInt64(bitPattern: previous &- time), to: &value)
            previous = time
        }
    }

    /// A user's senders from its `P` record (``encode(_:to:)``) or from the `S` record written
    /// before it (each time in full); the next write of them puts a tombstone on the `S` key.
    mutating func restore(user: UInt32, kind: UInt8, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        let fromOldForm = kind != Self.recordKind
        var ring = self.ringOfUser[user]
        if ring == StateIndex.none {
            ring = UInt32(self.rings.count)
            self.rings.append(SenderRing(user: user))
            self.ringOfUser.set(user, to: ring)
        }
        var senders = SenderRing(user: user)
        var reader = PartitionState.Reader(bytes: value ?? UnsafeRawBufferPointer(start: nil, count: 0))
        var place = 0
        while !reader.isAtEnd {
            guard place < SenderRing.capacity else {
                throw StateFormatError(code: .malformed, message: "more senders than a ring holds")
            }
            var hash: UInt64 = 0
            for shift in 0..<8 { hash |= UInt64(try reader.byte()) << UInt64(shift * 8) }
            senders.hashes[place] = hash
            let time = try reader.varint()
            if fromOldForm || place == 0 {
                senders.times[place] = Int64(bitPattern: time)
            } else {
                let (earlier, overflow) = senders.times[place - 1].subtractingReportingOverflow(Int64(bitPattern: time))
                guard !overflow, time <= UInt64(Int64.max), earlier != .min else {
                    throw StateFormatError(code: .malformed, message: "a sender's time")
                }
                senders.times[place] = earlier
            }
            place += 1
        }
        senders.hasOldFormRecord = fromOldForm && value != nil
        self.rings.replace(ring, with: senders)
    }

    mutating func commit() {
        self.clearMarks()
        self.rings.commit()
        self.ringOfUser.commit()
        self.committedFree = self.free.count
    }

    mutating func rollBack() {
        self.rings.rollBack()
        self.ringOfUser.rollBack()
        self.free.rollBack(to: self.committedFree)
        self.clearMarks()
    }

    private mutating func clearMarks() {
        for user in self.marked {
            let ring = self.ringOfUser[user]
            if ring != StateIndex.none { self.rings[Int(ring)].isDirty = false }
        }
        self.marked.removeAll(keepingCapacity: true)
    }

    mutating func forget(user: UInt32) {
        let ring = self.ringOfUser[user]
        guard ring != StateIndex.none else { return }
        self.rings.replace(ring, with: SenderRing(user: StateIndex.none))
        self.ringOfUser.set(user, to: StateIndex.none)
        self.free.free(ring)
    }

    var markedUsers: [UInt32] {
        self.ringOfUser.assigned.filter { self.rings[Int($0.slot)].isDirty }.map(\.user)
    }

    var violations: [String] {
        var found = self.rings.violations + self.ringOfUser.violations.map { "by user: \($0)" }
        for (user, ring) in self.ringOfUser.assigned {
            if Int(ring) >= self.rings.count {
                found.append("user \(user)'s ring \(ring) is past the rings")
            } else if self.rings[Int(ring)].user != user {
                found.append("user \(user)'s ring \(ring) is user \(self.rings[Int(ring)].user)'s")
            }
        }
        return found
    }
}

extension PartitionState {
    /// Whether `senderID` sent `userID` another notification at most `windowMilliseconds` before
    /// `atMilliseconds` (or after it: producers' clocks differ), by record timestamps.
    public func isRepeatedSender(userID: String, senderID: String?, atMilliseconds: Int64, windowMilliseconds: Int64)
        -> Bool
    {
        guard let senderID, let user = self.userNumber(userID) else { return false }
        return self.userRecords.senders.isRepeated(
            user: user, senderHash: Self.senderHash(senderID), atMilliseconds: atMilliseconds,
            windowMilliseconds: windowMilliseconds)
    }

    /// The stable hash of a sender id: 64-bit FNV-1a of its UTF-8 bytes, from another basis
    /// than ``idHash(_:)``'s.
    static func senderHash(_ senderID: String) -> UInt64 {
        StableHash.sender(senderID)
    }
}
