/// Why a serialized badge state could not be read.
public struct BadgeStateError: Error, Sendable, Hashable {
    public var message: String
}

// MARK: - Compact form for the state changelog

extension BadgeLedger {
    private static let formatVersion: UInt8 = 1

    /// The user's badge state in a compact binary form (for `focusgate.state`), or `nil` when the
    /// user has none (publish a tombstone).
    ///
    /// Layout: format byte, then varint-prefixed: app count; per app its id, sequence, badge,
    /// unread count, and per unread notification its id and optional criteria.
    public func serializedState(userID: String) -> [UInt8]? {
        var out: [UInt8] = []
        return self.appendSerializedState(userID: userID, to: &out) ? out : nil
    }

    /// Appends the form of ``serializedState(userID:)`` to `out` (a buffer the caller reuses);
    /// `false`, with `out` unchanged, when the user has no badge state.
    public func appendSerializedState(userID: String, to out: inout [UInt8]) -> Bool {
        guard let user = self.users[userID] else { return false }
        out.append(Self.formatVersion)
        Self.writeVarint(UInt64(user.apps.count), to: &out)
        // Apps in id order, so that equal states give equal bytes; most users have one app here.
        if user.apps.count == 1, let (appID, app) = user.apps.first {
            Self.write(appID, app, to: &out)
        } else {
            for appID in user.apps.keys.sorted() {
                Self.write(appID, user.apps[appID]!, to: &out)
            }
        }
        return true
    }

    private static func write(_ appID: String, _ app: AppBadge, to out: inout [UInt8]) {
        Self.writeString(appID, to: &out)
        Self.writeVarint(app.sequence, to: &out)
        Self.writeVarint(UInt64(app.badge), to: &out)
        Self.writeVarint(UInt64(app.ids.count), to: &out)
        for (id, criteria) in zip(app.ids, app.criteria) {
            Self.writeString(id, to: &out)
            if let criteria {
                out.append(1)
                Self.writeString(criteria, to: &out)
            } else {
                out.append(0)
            }
        }
    }

    /// Restores a user's badge state read from the changelog, replacing what the ledger had.
    ///
    /// - Throws: ``BadgeStateError`` for bytes this version cannot read; the ledger is unchanged then.
    public mutating func restore(userID: String, from bytes: [UInt8]) throws(BadgeStateError) {
        var reader = Reader(bytes: bytes)
        guard try reader.byte() == Self.formatVersion else {
            throw BadgeStateError(message: "unknown badge state format")
        }
        var user = UserBadges()
        let appCount = try reader.varint()
        for _ in 0..<appCount {
            let appID = try reader.string()
            var app = AppBadge()
            app.sequence = try reader.varint()
            app.badge = Int(try reader.varint())
            let unread = try reader.varint()
            guard unread <= UInt64(bytes.count) else {
                throw BadgeStateError(message: "unread count exceeds the record")
            }
            for _ in 0..<unread {
                app.ids.append(try reader.string())
                app.criteria.append(try reader.byte() == 1 ? try reader.string() : nil)
                app.counts.append(false)
            }
            // Counts are recomputed with the context at the next operation.
            app.countedUnder = nil
            user.apps[appID] = app
        }
        guard reader.isAtEnd else { throw BadgeStateError(message: "trailing bytes in badge state") }
        self.users[userID] = user.apps.isEmpty ? nil : user
    }

    // MARK: Encoding primitives

    static func writeVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    static func writeString(_ value: String, to out: inout [UInt8]) {
        self.writeVarint(UInt64(value.utf8.count), to: &out)
        out.append(contentsOf: value.utf8)
    }

    struct Reader {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { self.index == self.bytes.count }

        mutating func byte() throws(BadgeStateError) -> UInt8 {
            guard self.index < self.bytes.count else { throw BadgeStateError(message: "truncated badge state") }
            defer { self.index += 1 }
            return self.bytes[self.index]
        }

        mutating func varint() throws(BadgeStateError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try self.byte()
                guard shift < 64 else { throw BadgeStateError(message: "varint too long") }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        mutating func string() throws(BadgeStateError) -> String {
            let length = try self.varint()
            guard length <= UInt64(self.bytes.count - self.index) else {
                throw BadgeStateError(message: "truncated badge state")
            }
            let end = self.index + Int(length)
            defer { self.index = end }
            return String(decoding: self.bytes[self.index..<end], as: UTF8.self)
        }
    }
}
