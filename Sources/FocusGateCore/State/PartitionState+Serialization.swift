// MARK: - The state changelog form (`focusgate.state`, key = user id)

extension PartitionState {
    private static let formatVersion: UInt8 = 1

    /// The user's state for the changelog, or `nil` when the user has none (publish a tombstone).
    ///
    /// Layout: format byte; varint count of remembered ids, then each id's hash as 8 bytes
    /// little-endian, oldest first; then the ``BadgeLedger`` form of the user's badges, if any.
    public func serializedState(userID: String) -> [UInt8]? {
        var out: [UInt8] = []
        return self.appendSerializedState(userID: userID, to: &out) ? out : nil
    }

    /// Appends the form of ``serializedState(userID:)`` to `out` (a buffer the caller reuses, so
    /// that a commit allocates nothing per user); `false`, with `out` unchanged, when the user has
    /// no state.
    public func appendSerializedState(userID: String, to out: inout [UInt8]) -> Bool {
        let window = self.windows[userID]
        guard window != nil || self.ledger.users[userID] != nil else { return false }
        out.append(Self.formatVersion)
        BadgeLedger.writeVarint(UInt64(window?.count ?? 0), to: &out)
        window?.forEachHashOldestFirst { hash in
            withUnsafeBytes(of: hash.littleEndian) { out.append(contentsOf: $0) }
        }
        _ = self.ledger.appendSerializedState(userID: userID, to: &out)
        return true
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
