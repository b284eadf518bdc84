/// Why a state changelog record could not be read.
public struct StateFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        /// A whole-user record of the first state form (before the change-keyed form).
        public static let legacyFormat = Code(rawValue: "legacy-state-format")
        /// Bytes this version cannot read.
        public static let malformed = Code(rawValue: "malformed-state")
        public var description: String { self.rawValue }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(self.code): \(self.message)" }
}

// MARK: - The changelog form (`focusgate.state`): one record per changed key

/// Keys start with a zero byte and a kind letter, fixed-size parts first and the user id last:
///
/// | kind | key | value (tombstone: the key is gone) |
/// |---|---|---|
/// | entry | `00 'I'` id length, id, user (`00 'E'` id-hash (8, LE) user: written before ids were kept) | flags (1: unread, 2: silenced, 4: summarised, 8: extended, 16: the app's counts follow: sequence, badge, 32: and what they were counted under, 64: the decision follows: reason (+ 64: a Focus code, + 32: an offset's distance, + 16: decided-at's distance), context version + 1, Focus, source offset + 1 or its distance below the `as-of`; 128: no relevance byte), app ordinal, arrival, decided-at (milliseconds since 1970, or with + 16 their distance below the record's timestamp), relevance byte, criteria (length + 1, `0`: none) and bytes; then, extended: sender, thread (each length + 1, `0`: none), `1` and the summary item (id, source offset + 1, Focus; `E` keys only) or `0`; not extended: the sender only when the notification named one |
/// | app name | `00 'N'` ordinal user | the app id |
/// | app counts | `00 'A'` ordinal user | sequence, badge; only when the app's newest unread entry is not written with them |
/// | user's counts | `00 'U'` user | per app that published: ordinal, sequence, badge; instead of `A` records when several apps need one |
/// | senders | `00 'P'` user | per recent sender (up to 4), newest first: its id's hash (8, LE), its latest record timestamp (the first in full, each other as its distance below the one before; `00 'S'`: each in full, written before) |
/// | rate windows | `00 'R'` user | per window (the user's own, then up to 16 apps'): app id hash (8, LE; `0`: the user's own), slot width (ms), newest slot, a bit per slot with a count, those counts |
/// | commit | `00 'C'` | the input offset the partition's state is as of |
///
/// Numbers are unsigned LEB128 varints. The dedupe window is not written: it is the user's
/// newest entries by arrival.
extension PartitionState {
    static let entryKind = UInt8(ascii: "E")
    static let idEntryKind = UInt8(ascii: "I")
    static let nameKind = UInt8(ascii: "N")
    static let countsKind = UInt8(ascii: "A")
    static let userCountsKind = UInt8(ascii: "U")
    static let commitKind = UInt8(ascii: "C")
    /// The kinds keyed by the user alone: a forgotten user's tombstones.
    static let userKinds = [userCountsKind] + UserRecords().recordKinds

    /// The key of the record that closes a partition's changes in a transaction.
    public static let commitMarkerKey: [UInt8] = [0, commitKind]

    /// The value of the commit marker: the input offset the state is as of.
    public static func commitMarkerValue(through offset: Int64) -> [UInt8] {
        var value: [UInt8] = []
        Self.writeVarint(UInt64(bitPattern: offset), to: &value)
        return value
    }

    /// The header every other record of a commit carries: the input offset its state is as of,
    /// in the marker's form (``commitMarkerValue(through:)``). A restore tells by it which commit
    /// a record belongs to, also when another writer's records lie between it and its marker
    /// (docs/state.md, "Exactly-once and the commit marker").
    public static let asOfHeader = "as-of"

    /// The input offset an `as-of` header holds; `nil` when its bytes are not one.
    public static func asOfOffset(_ value: UnsafeRawBufferPointer) -> Int64? {
        var reader = Reader(bytes: value)
        guard let offset = try? reader.varint(), reader.isAtEnd else { return nil }
        return Int64(bitPattern: offset)
    }

    /// The input offset of a commit marker record; `nil` when the record is not one.
    /// Called for every record a restore reads: compares two bytes, nothing generic.
    public static func commitMarkerOffset(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) -> Int64? {
        guard key.count == 2, key[0] == 0, key[1] == Self.commitKind, let value else { return nil }
        var reader = Reader(bytes: value)
        return (try? reader.varint()).map { Int64(bitPattern: $0) }
    }

    /// Calls `write` once per key changed since the last write (or commit, or rollback),
    /// coalesced (a key changed many times is written once, as it is now); `nil` value: a
    /// tombstone. The buffers passed are reused from call to call.
    ///
    /// An interval may be written more than once before its commit (exactly-once, the gateway
    /// writes the changes so far into the open transaction a few times an interval): each write
    /// goes through the changes listed since the one before, and a rollback still returns to the
    /// last commit.
    ///
    /// - Parameters:
    ///   - asOf: the input offset the commit is as of, which each record's `as-of` header will
    ///     carry (``asOfHeader``): an entry's input offset is then written as its distance from it
    ///     where that is shorter. `nil`: records without the header.
    ///   - writtenAt: the timestamp (milliseconds since 1970) each record will carry as its Kafka
    ///     timestamp: an entry's decided-at is then written as its distance below it where that
    ///     is shorter. `nil`: decided-at in full.
    public mutating func writeChanges<E: Error>(
        asOf: Int64? = nil, writtenAt: Int64? = nil, _ write: (_ key: [UInt8], _ value: [UInt8]?) throws(E) -> Void
    ) throws(E) {
        var key: [UInt8] = []
        var value: [UInt8] = []
        key.reserveCapacity(300)
        value.reserveCapacity(300)
        for change in self.changes.unwritten {
            key.removeAll(keepingCapacity: true)
            value.removeAll(keepingCapacity: true)
            switch change {
            case .entry(let user, let idHash, let index, let id):
                key.append(0)
                if id.length > 0 {
                    key.append(Self.idEntryKind)
                    Self.writeVarint(UInt64(id.length), to: &key)
                    let start = Int(id.start)
                    self.idBytes.withUnsafeBufferPointer {
                        key.append(contentsOf: UnsafeBufferPointer(rebasing: $0[start..<start + Int(id.length)]))
                    }
                } else {
                    key.append(Self.entryKind)
                    withUnsafeBytes(of: idHash.littleEndian) { key.append(contentsOf: $0) }
                }
                key.append(contentsOf: self.userIDByNumber[Int(user)].utf8)
                let entry = self.entries[Int(index)]
                // Not where it was: gone, unless the key lives again in another slot, whose own
                // change writes it (listed before this one or after: a tombstone here would
                // follow a record written already).
                guard entry.has(StateEntry.alive) && entry.user == user && entry.idHash == idHash else {
                    if self.findEntry(user: user, idHash: idHash) == nil { try write(key, nil) }
                    continue
                }
                guard entry.has(StateEntry.dirty) else { continue }  // written already
                self.entries[Int(index)].flags &= ~StateEntry.dirty
                let carriesCounts = self.carriesCounts(entry, at: index)
                if carriesCounts { self.apps[Int(entry.app)].flags &= ~AppSlot.dirtyCounts }
                let decision = self.decisions[Int(index)]
                self.encode(
                    entry, decision: decision, carryingCounts: carriesCounts, asOf: asOf, writtenAt: writtenAt,
                    to: &value)
                try write(key, value)
            case .userRecord(let kind, let user):
                try self.userRecords.writeRecord(
                    kind: kind, user: user, userID: self.userIDByNumber[Int(user)], key: &key, value: &value, write)
            case .appName(let user, let ordinal, let at):
                Self.appendAppKey(
                    kind: Self.nameKind, ordinal: ordinal, userID: self.userIDByNumber[Int(user)], to: &key)
                guard let app = self.app(user: user, ordinal: ordinal, at: at) else {
                    try write(key, nil)
                    continue
                }
                guard self.apps[Int(app)].has(AppSlot.dirtyName) else { continue }
                self.apps[Int(app)].flags &= ~AppSlot.dirtyName
                value.append(contentsOf: self.appIDBySlot[Int(app)].utf8)
                try write(key, value)
            case .appCounts(let user, let ordinal, let at):
                switch self.encodeCounts(user: user, ordinal: ordinal, at: at, key: &key, value: &value) {
                case .nothing: continue
                case .tombstone: try write(key, nil)
                case .record: try write(key, value)
                }
            case .userGone(let user):
                // Still with nothing (no later change gave it something): its user-wide keys go.
                guard self.hasNothing(user: user) else { continue }
                for kind in Self.userKinds {
                    key.removeAll(keepingCapacity: true)
                    self.appendUserKey(kind: kind, user: user, to: &key)
                    try write(key, nil)
                }
            }
        }
        self.changes.markWritten()
    }

    private enum Encoded { case nothing, tombstone, record }

    /// The record holding an app's changed counts, into `key` and `value`: nothing when they ride
    /// with its newest entry's record in this commit or were written already; the user's counts
    /// record when another of the user's apps needs one too (a context change recounts them all);
    /// else the app's own. A tombstone when the app is gone or never published.
    private mutating func encodeCounts(
        user: UInt32, ordinal: UInt32, at: UInt32, key: inout [UInt8], value: inout [UInt8]
    ) -> Encoded {
        let userID = self.userIDByNumber[Int(user)]
        guard let app = self.app(user: user, ordinal: ordinal, at: at) else {
            Self.appendAppKey(kind: Self.countsKind, ordinal: ordinal, userID: userID, to: &key)
            return .tombstone
        }
        guard self.apps[Int(app)].has(AppSlot.dirtyCounts) else { return .nothing }
        guard self.apps[Int(app)].sequence > 0 else {
            self.apps[Int(app)].flags &= ~AppSlot.dirtyCounts
            Self.appendAppKey(kind: Self.countsKind, ordinal: ordinal, userID: userID, to: &key)
            return .tombstone
        }
        guard self.needsCountsRecord(app) else { return .nothing }
        var others = AppList.walk(self.users[Int(user)])
        var anotherNeedsOne = false
        while !anotherNeedsOne, let other = others.next(in: self.apps) {
            anotherNeedsOne = other != app && self.needsCountsRecord(other)
        }
        if anotherNeedsOne {
            self.appendUserKey(kind: Self.userCountsKind, user: user, to: &key)
            // The form with the counted context: a leading zero, which no app ordinal is.
            value.append(0)
            var apps = AppList.walk(self.users[Int(user)])
            while let each = apps.next(in: self.apps) {
                let slot = self.apps[Int(each)]
                if slot.sequence > 0 {
                    Self.writeVarint(UInt64(slot.ordinal), to: &value)
                    Self.writeVarint(slot.sequence, to: &value)
                    Self.writeVarint(UInt64(slot.badge), to: &value)
                    if let countedUnder = Self.countedContext(of: slot) {
                        Self.writeCountedContext(countedUnder, to: &value)
                    } else {
                        value.append(0)
                    }
                    self.apps[Int(each)].flags &= ~AppSlot.dirtyCounts
                }
            }
            return .record
        }
        self.apps[Int(app)].flags &= ~AppSlot.dirtyCounts
        Self.appendAppKey(kind: Self.countsKind, ordinal: ordinal, userID: userID, to: &key)
        Self.writeVarint(self.apps[Int(app)].sequence, to: &value)
        Self.writeVarint(UInt64(self.apps[Int(app)].badge), to: &value)
        if let countedUnder = Self.countedContext(of: self.apps[Int(app)]) {
            Self.writeCountedContext(countedUnder, to: &value)
        }
        return .record
    }

    /// What an app's badge was counted under, as the changelog holds it: the Focus byte
    /// (``AppSlot/countedFocus``, never `0` here) and the context version + 1 (`0`: no context).
    /// `nil` when there is nothing to write: not counted yet, or a version the form cannot hold.
    static func countedContext(of app: AppSlot) -> (focus: UInt8, version: UInt64)? {
        guard app.countedFocus != 0 else { return nil }
        if app.countedVersion == .min { return (app.countedFocus, 0) }
        guard app.countedVersion >= 0 else { return nil }
        return (app.countedFocus, UInt64(app.countedVersion) + 1)
    }

    private static func writeCountedContext(_ counted: (focus: UInt8, version: UInt64), to value: inout [UInt8]) {
        value.append(counted.focus)
        Self.writeVarint(counted.version, to: &value)
    }

    /// The app published, its counts changed, and no entry record of this commit carries them
    /// (its newest unread entry is not written in it, or not again).
    private func needsCountsRecord(_ app: UInt32) -> Bool {
        let slot = self.apps[Int(app)]
        guard slot.has(AppSlot.dirtyCounts), slot.sequence > 0 else { return false }
        return slot.unreadTail == StateIndex.none || !self.entries[Int(slot.unreadTail)].has(StateEntry.dirty)
    }

    /// The key of a record keyed by the user alone: `00`, the kind, the user id.
    private func appendUserKey(kind: UInt8, user: UInt32, to key: inout [UInt8]) {
        key.append(0)
        key.append(kind)
        key.append(contentsOf: self.userIDByNumber[Int(user)].utf8)
    }

    private static func appendAppKey(kind: UInt8, ordinal: UInt32, userID: String, to key: inout [UInt8]) {
        key.append(0)
        key.append(kind)
        Self.writeVarint(UInt64(ordinal), to: &key)
        key.append(contentsOf: userID.utf8)
    }

    /// Whether the entry's record carries its app's counts: it is the app's newest unread entry
    /// and the app has published a badge. Its record is then the newest one holding the counts,
    /// so compaction cannot drop them: the entry is written again (with them) whenever it changes
    /// while it is the newest, and the counts are marked changed when it stops being the newest.
    private func carriesCounts(_ entry: StateEntry, at index: UInt32) -> Bool {
        guard entry.app != StateIndex.none else { return false }
        let app = self.apps[Int(entry.app)]
        return app.unreadTail == index && app.sequence > 0
    }

    private func encode(
        _ entry: StateEntry, decision: DecisionRecord, carryingCounts: Bool, asOf: Int64?, writtenAt: Int64?,
        to value: inout [UInt8]
    ) {
        let attributes = self.attributes[entry.attributes]
        // A record keyed by the id's hash names a silenced notification's id in its summary item;
        // one keyed by the id has it in the key, and the rest of the item in the decision.
        let item = decision.summarizable && decision.hashKeyed && decision.hasID ? decision : nil
        // Only an entry with a thread or a summary item takes the extended form: others are
        // written as before summaries existed.
        let extended = attributes.thread != nil || item != nil
        let decided = decision.isKnown
        var flags: UInt8 = 0
        if entry.has(StateEntry.unread) { flags |= 1 }
        if entry.has(StateEntry.silenced) { flags |= 2 }
        if entry.has(StateEntry.summarized) { flags |= 4 }
        if extended { flags |= 8 }
        if carryingCounts { flags |= 16 }
        let countedUnder = carryingCounts ? Self.countedContext(of: self.apps[Int(entry.app)]) : nil
        if countedUnder != nil { flags |= 32 }
        if decided { flags |= 64 }
        if entry.relevance == 0 { flags |= 128 }
        value.append(flags)
        if carryingCounts {
            let app = self.apps[Int(entry.app)]
            Self.writeVarint(app.sequence, to: &value)
            Self.writeVarint(UInt64(app.badge), to: &value)
            if let countedUnder { Self.writeCountedContext(countedUnder, to: &value) }
        }
        // Decided-at: in full, or (a decided entry, flag 16 of the decision byte) as its distance
        // below the record's timestamp, 1–3 bytes instead of 6 for a time of this century.
        var decidedAt = UInt64(bitPattern: entry.decidedAt)
        var decidedAtByDistance = false
        if decided, let writtenAt, entry.decidedAt >= 0, entry.decidedAt <= writtenAt,
            UInt64(writtenAt - entry.decidedAt) < decidedAt
        {
            decidedAt = UInt64(writtenAt - entry.decidedAt)
            decidedAtByDistance = true
        }
        if decided {
            // How it was decided: the reason (+ 128: a summary may list it; + 64: the Focus is
            // one the system offers, written as its code; + 32: the input's offset is written as
            // its distance from the record's `as-of`; + 16: decided-at as its distance below the
            // record's timestamp), the context version + 1 (`0`: none), the Focus on, the input's
            // offset + 1 (`0`: not known) or its distance.
            let focusCode = self.wellKnownFocusCode(decision.focus)
            var offset = UInt64(bitPattern: decision.sourceOffset &+ 1)
            var byDistance = false
            if let asOf, decision.sourceOffset >= 0, decision.sourceOffset < asOf,
                UInt64(asOf - decision.sourceOffset) < offset
            {
                offset = UInt64(asOf - decision.sourceOffset)
                byDistance = true
            }
            value.append(
                decision.reason | (decision.summarizable ? 0x80 : 0) | (focusCode != 0 ? 0x40 : 0)
                    | (byDistance ? 0x20 : 0) | (decidedAtByDistance ? 0x10 : 0))
            Self.writeVarint(decision.contextVersion < 0 ? 0 : UInt64(decision.contextVersion) + 1, to: &value)
            if focusCode != 0 {
                value.append(focusCode)
            } else {
                self.writeFocus(decision.focus, to: &value)
            }
            Self.writeVarint(offset, to: &value)
            // The app of a read notification too: the history names it.
            Self.writeVarint(UInt64(decision.appOrdinal), to: &value)
        } else {
            Self.writeVarint(entry.app == StateIndex.none ? 0 : UInt64(self.apps[Int(entry.app)].ordinal), to: &value)
        }
        Self.writeVarint(UInt64(entry.arrival), to: &value)
        Self.writeVarint(decidedAt, to: &value)
        if entry.relevance != 0 { value.append(entry.relevance) }  // flag 128: none
        Self.writeOptionalString(attributes.criteria, to: &value)
        if extended {
            Self.writeOptionalString(attributes.sender, to: &value)
            Self.writeOptionalString(attributes.thread, to: &value)
            if let item {
                value.append(1)
                Self.writeVarint(UInt64(item.idLength) + 1, to: &value)
                let start = Int(item.idStart)
                value.append(contentsOf: self.idBytes[start..<start + Int(item.idLength)])
                Self.writeVarint(UInt64(bitPattern: item.sourceOffset &+ 1), to: &value)
                Self.writeOptionalString(self.focusName(item.focus), to: &value)
            } else {
                value.append(0)
            }
        } else if let sender = attributes.sender {
            // Absent without a sender: such an entry is written as before senders existed.
            Self.writeOptionalString(sender, to: &value)
        }
    }

    /// Length + 1 and the UTF-8 bytes; `0` for `nil`.
    private static func writeOptionalString(_ text: String?, to value: inout [UInt8]) {
        guard var text else { return value.append(0) }
        // One copy of the contiguous UTF-8 bytes: appending `text.utf8` goes byte by byte.
        text.withUTF8 { bytes in
            Self.writeVarint(UInt64(bytes.count) + 1, to: &value)
            value.append(contentsOf: bytes)
        }
    }

    // MARK: - Encoding primitives

    @inline(__always)
    static func writeVarint(_ value: UInt64, to out: inout [UInt8]) {
        // Most numbers a record holds take one byte.
        guard value >= 0x80 else { return out.append(UInt8(value)) }
        Self.writeLongVarint(value, to: &out)
    }

    private static func writeLongVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var isAtEnd: Bool { self.index == self.bytes.count }

        mutating func byte() throws(StateFormatError) -> UInt8 {
            guard self.index < self.bytes.count else { throw StateFormatError(code: .malformed, message: "truncated") }
            defer { self.index += 1 }
            return self.bytes[self.index]
        }

        mutating func varint() throws(StateFormatError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try self.byte()
                guard shift < 64 else { throw StateFormatError(code: .malformed, message: "varint too long") }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        /// A counted context (``PartitionState/countedContext(of:)``) after its Focus byte.
        mutating func countedContext(focus: UInt8) throws(StateFormatError) -> CountedContext {
            let version = try self.varint()
            guard version <= UInt64(Int64.max) else {
                throw StateFormatError(code: .malformed, message: "counted context version")
            }
            return CountedContext(version: version == 0 ? .min : Int64(version - 1), focus: focus)
        }

        /// A string written as length + 1 and its bytes; `nil` for `0`.
        mutating func optionalString() throws(StateFormatError) -> String? {
            let length = try self.varint()
            return length == 0 ? nil : try self.string(length: length - 1)
        }

        mutating func string(length: UInt64) throws(StateFormatError) -> String {
            guard length <= UInt64(self.bytes.count - self.index) else {
                throw StateFormatError(code: .malformed, message: "truncated string")
            }
            let end = self.index + Int(length)
            defer { self.index = end }
            return String(decoding: self.bytes[self.index..<end], as: UTF8.self)
        }
    }
}
