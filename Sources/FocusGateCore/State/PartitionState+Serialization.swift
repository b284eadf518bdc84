// MARK: - The state changelog form (`focusgate.state`, key = user id)

extension PartitionState {
    private static let formatVersion: UInt8 = 1

    /// The user's state for the changelog, or `nil` when the user has none (publish a tombstone).
    ///
    /// Layout: format byte; varint count of remembered ids, then each id's hash as 8 bytes
    /// little-endian, oldest first; then the ``BadgeLedger`` form of the user's badges, if any.
    public func serializedState(userID: String) -> [UInt8]? {
        let window = self.windows[userID]
        let badges = self.ledger.serializedState(userID: userID)
        guard window != nil || badges != nil else { return nil }
        var out: [UInt8] = [Self.formatVersion]
        let hashes = window?.hashesOldestFirst ?? []
        BadgeLedger.writeVarint(UInt64(hashes.count), to: &out)
        out.reserveCapacity(out.count + hashes.count * 8 + (badges?.count ?? 0))
        for hash in hashes {
            withUnsafeBytes(of: hash.littleEndian) { out.append(contentsOf: $0) }
        }
        if let badges { out.append(contentsOf: badges) }
        return out
    }

    /// Restores a user's state read from the changelog (`nil`: a tombstone, the user has none).
    /// Restored state counts as committed.
    ///
    /// - Throws: ``BadgeStateError`` for bytes this version cannot read; the state is unchanged then.
    public mutating func restore(userID: String, from bytes: [UInt8]?) throws(BadgeStateError) {
        guard let bytes else {
            self.ledger.remove(userID: userID)
            self.windows[userID] = nil
            return
        }
        var reader = BadgeLedger.Reader(bytes: bytes)
        guard try reader.byte() == Self.formatVersion else {
            throw BadgeStateError(message: "unknown state format")
        }
        let count = try reader.varint()
        guard count <= UInt64((bytes.count - reader.index) / 8) else {
            throw BadgeStateError(message: "truncated dedupe window")
        }
        var hashes: [UInt64] = []
        hashes.reserveCapacity(Int(count))
        for _ in 0..<count {
            var hash: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) {
                hash |= UInt64(try reader.byte()) << UInt64(shift)
            }
            hashes.append(hash)
        }
        var ledger = self.ledger
        if reader.isAtEnd {
            ledger.remove(userID: userID)
        } else {
            try ledger.restore(userID: userID, from: Array(bytes[reader.index...]))
        }
        self.ledger = ledger
        self.windows[userID] =
            hashes.isEmpty ? nil : DedupeWindow(capacity: self.dedupeWindow, hashesOldestFirst: hashes)
    }
}
