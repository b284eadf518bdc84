// MARK: - Repeated senders

extension PartitionState {
    /// Whether `senderID` sent `userID` another notification at most `windowMilliseconds` before
    /// `atMilliseconds` (or after it: producers' clocks differ), by record timestamps, so that a
    /// replay decides the same way.
    public func isRepeatedSender(userID: String, senderID: String?, atMilliseconds: Int64, windowMilliseconds: Int64)
        -> Bool
    {
        guard let senderID, let user = self.userNumber(userID) else { return false }
        return self.isRepeatedSender(
            user: user, senderHash: Self.senderHash(senderID), atMilliseconds: atMilliseconds,
            windowMilliseconds: windowMilliseconds)
    }

    @inline(__always)
    func isRepeatedSender(user: UInt32, senderHash hash: UInt64, atMilliseconds: Int64, windowMilliseconds: Int64)
        -> Bool
    {
        let ring = self.users[Int(user)].senderRing
        guard ring != StateIndex.none else { return false }
        let senders = self.senderRings[Int(ring)]
        for place in 0..<SenderRing.capacity where senders.times[place] != .min && senders.hashes[place] == hash {
            let gap = atMilliseconds.subtractingReportingOverflow(senders.times[place])
            return !gap.overflow && gap.partialValue.magnitude <= UInt64(max(0, windowMilliseconds))
        }
        return false
    }

    /// Notes a notification from the sender (by ``senderHash(_:)``) at `atMilliseconds` in the user's ring: its time when
    /// the sender is there (the later of the two), else in an empty place or the oldest's.
    mutating func noteSender(user: UInt32, senderHash hash: UInt64, atMilliseconds: Int64) {
        var ring = self.users[Int(user)].senderRing
        if ring == StateIndex.none {
            if let reused = self.freeSenderRings.take() {
                ring = reused
                self.senderRings.replace(ring, with: SenderRing(user: user))
            } else {
                ring = UInt32(self.senderRings.count)
                self.senderRings.append(SenderRing(user: user))
            }
            self.modifyUser(user) { $0.senderRing = ring }
        }
        let senders = self.senderRings[Int(ring)]
        var place = 0
        for candidate in 0..<SenderRing.capacity {
            if senders.times[candidate] != .min && senders.hashes[candidate] == hash {
                place = candidate
                break
            }
            if senders.times[candidate] < senders.times[place] { place = candidate }
        }
        let time = senders.hashes[place] == hash ? max(senders.times[place], atMilliseconds) : atMilliseconds
        guard senders.hashes[place] != hash || senders.times[place] != time else { return }
        self.senderRings.modify(ring) { ring in
            ring.hashes[place] = hash
            ring.times[place] = time
        }
        if !senders.isDirty {
            self.senderRings[Int(ring)].isDirty = true
            self.changes.append(.senders(user: user))
        }
    }

    /// The value of a user's `P` changelog record: per sender, newest first, its hash (8 bytes,
    /// little-endian) and time: the newest's as a varint of the two's complement, each other's as
    /// its distance below the one before (one to four bytes where a time takes six).
    func encodeSenders(_ senders: SenderRing, to value: inout [UInt8]) {
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
            Self.writeVarint(
                index == 0 ? UInt64(bitPattern: time) : UInt64(bitPattern: previous &- time), to: &value)
            previous = time
        }
    }

    /// A user's senders from its `P` record (``encodeSenders(_:to:)``) or, `fromOldForm`, from
    /// the `S` record written before it (each time in full); the next write of them puts a
    /// tombstone on the `S` key.
    mutating func restoreSenders(user: UInt32, value: UnsafeRawBufferPointer?, fromOldForm: Bool)
        throws(StateFormatError)
    {
        var ring = self.users[Int(user)].senderRing
        if ring == StateIndex.none {
            ring = UInt32(self.senderRings.count)
            self.senderRings.append(SenderRing(user: user))
            self.users[Int(user)].senderRing = ring
        }
        var senders = SenderRing(user: user)
        var reader = Reader(bytes: value ?? UnsafeRawBufferPointer(start: nil, count: 0))
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
        self.senderRings[Int(ring)] = senders
    }

    /// The stable hash of a sender id: 64-bit FNV-1a of its UTF-8 bytes, from another basis
    /// than ``idHash(_:)``'s.
    static func senderHash(_ senderID: String) -> UInt64 {
        StableHash.sender(senderID)
    }
}
