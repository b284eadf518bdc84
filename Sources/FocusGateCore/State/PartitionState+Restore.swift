// MARK: - Restore: the changelog read back into a partition state (docs/state.md, Restore)

extension PartitionState {
    /// Applies one changelog record, in log order. Until ``finishRestore()``, the state is only
    /// a set of records: call nothing else in between.
    ///
    /// - Throws: ``StateFormatError``: `legacy-state-format` for a record of the first state form,
    ///   `malformed-state` for bytes this version cannot read; the record is not applied then.
    ///
    /// `asOf`: the offset of the record's `as-of` header (``asOfHeader``), `nil` without one;
    /// `writtenAt`: the record's Kafka timestamp (milliseconds since 1970), `nil` without one.
    public mutating func restore(key: [UInt8], value: [UInt8]?, asOf: Int64? = nil, writtenAt: Int64? = nil)
        throws(StateFormatError)
    {
        try key.withUnsafeBufferPointer { (key) throws(StateFormatError) in
            guard let value else {
                return try self.restore(key: UnsafeRawBufferPointer(key), value: nil, asOf: asOf, writtenAt: writtenAt)
            }
            try value.withUnsafeBufferPointer { (value) throws(StateFormatError) in
                try self.restore(
                    key: UnsafeRawBufferPointer(key), value: UnsafeRawBufferPointer(value), asOf: asOf,
                    writtenAt: writtenAt)
            }
        }
    }

    /// ``restore(key:value:asOf:writtenAt:)`` from bytes it does not keep (a restore reads them
    /// where they lie).
    public mutating func restore(
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?, asOf: Int64? = nil, writtenAt: Int64? = nil
    ) throws(StateFormatError) {
        guard key.count >= 2, key[0] == 0 else {
            throw StateFormatError(
                code: .legacyFormat, message: "a whole-user state record of the first state form (key = user id)")
        }
        var reader = Reader(bytes: key, index: 2)
        switch key[1] {
        case Self.entryKind:
            guard key.count >= 10 else { throw StateFormatError(code: .malformed, message: "short entry key") }
            var idHash: UInt64 = 0
            for shift in 0..<8 { idHash |= UInt64(key[2 + shift]) << UInt64(shift * 8) }
            let user = self.restoredUser(UnsafeRawBufferPointer(rebasing: key[10...]))
            try self.restoreEntry(
                user: user, idHash: idHash, id: nil, value: value, asOf: asOf, writtenAt: writtenAt)
        case Self.idEntryKind:
            let length = try reader.varint()
            guard length > 0, length <= UInt64(key.count - reader.index) else {
                throw StateFormatError(code: .malformed, message: "entry key's id")
            }
            let idBytes = UnsafeRawBufferPointer(rebasing: key[reader.index..<reader.index + Int(length)])
            let user = self.restoredUser(UnsafeRawBufferPointer(rebasing: key[(reader.index + Int(length))...]))
            try self.restoreEntry(
                user: user, idHash: StableHash.fnv1a(idBytes, basis: Self.idHashBasis), id: idBytes, value: value,
                asOf: asOf, writtenAt: writtenAt)
        case Self.nameKind, Self.countsKind:
            let ordinal = try reader.varint()
            guard ordinal > 0, ordinal < UInt64(UInt32.max) else {
                throw StateFormatError(code: .malformed, message: "app ordinal out of range")
            }
            let user = self.restoredUser(UnsafeRawBufferPointer(rebasing: key[reader.index...]))
            try self.restoreApp(user: user, ordinal: UInt32(ordinal), isName: key[1] == Self.nameKind, value: value)
        case Self.userCountsKind:
            try self.restoreUserCounts(
                user: self.restoredUser(UnsafeRawBufferPointer(rebasing: key[2...])), value: value)
        case Self.commitKind:
            return
        case let kind where self.userRecords.reads(kind):
            try self.userRecords.restore(
                user: self.restoredUser(UnsafeRawBufferPointer(rebasing: key[2...])), kind: kind, value: value)
        default:
            throw StateFormatError(code: .malformed, message: "unknown record kind \(key[1])")
        }
    }

    /// The number of the user whose id a record's key ends with. A restore reads a user's records
    /// one after another more often than not (a commit writes a notification's entry and its app's
    /// counts together), so the last one's id is compared with these bytes first: no String is made,
    /// hashed and looked up for those.
    private mutating func restoredUser(_ id: UnsafeRawBufferPointer) -> UInt32 {
        if self.restoreLastUser != StateIndex.none {
            var last = self.userIDByNumber[Int(self.restoreLastUser)]
            let same = last.withUTF8 { last in
                guard last.count == id.count else { return false }
                for index in 0..<id.count where last[index] != id[index] { return false }
                return true
            }
            if same { return self.restoreLastUser }
        }
        self.restoreLastUser = self.internUser(String(decoding: id, as: UTF8.self))
        return self.restoreLastUser
    }

    /// `id`: the notification id the key holds; `nil` for a key with the id's hash alone.
    private mutating func restoreEntry(
        user: UInt32, idHash: UInt64, id: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?, asOf: Int64?,
        writtenAt: Int64?
    ) throws(StateFormatError) {
        let existing = self.findEntry(user: user, idHash: idHash)
        guard let value else {
            if let existing {
                self.unindex(existing)
                self.entries[Int(existing)] = .free
                self.entries[Int(existing)].windowNext = self.freeEntry
                self.freeEntry = existing
                self.liveEntries -= 1
            }
            return
        }
        var reader = Reader(bytes: value)
        let flags = try reader.byte()
        // Flag 16: the app's counts (sequence, badge) ride with its newest unread entry; 32:
        // with what the app's badge was counted under.
        let counts = flags & 16 != 0 ? (sequence: try reader.varint(), badge: try reader.varint()) : nil
        let countedUnder = flags & 32 != 0 ? try reader.countedContext(focus: try reader.byte()) : nil
        // Flag 64: how it was decided (records written before that was kept leave it unknown).
        var decision = DecisionRecord.unknown
        var decidedAtByDistance = false
        if flags & 64 != 0 {
            let byte = try reader.byte()
            let reason = byte & 0x0F
            decidedAtByDistance = byte & 0x10 != 0
            decision.summarizable = byte & 0x80 != 0
            let version = try reader.varint()
            guard Int(reason) <= Decision.Reason.all.count, version <= UInt64(Int64.max) else {
                throw StateFormatError(code: .malformed, message: "entry decision")
            }
            decision.reason = reason
            decision.contextVersion = version == 0 ? .min : Int64(version - 1)
            if byte & 0x40 != 0 {
                // A Focus the system offers, by its code.
                let code = Int(try reader.byte())
                guard code >= 1, code <= Self.wellKnownFocusNames.count else {
                    throw StateFormatError(code: .malformed, message: "entry decision's Focus code")
                }
                decision.focus = self.focusNumber(Self.wellKnownFocusNames[code - 1])
            } else {
                decision.focus = self.focusNumber(try reader.optionalString())
            }
            let offset = try reader.varint()
            if byte & 0x20 != 0 {
                // The input's offset as its distance from the record's `as-of`.
                guard let asOf, offset >= 1, offset <= UInt64(max(asOf, 0)) else {
                    throw StateFormatError(code: .malformed, message: "entry decision's offset without its as-of")
                }
                decision.sourceOffset = asOf - Int64(offset)
            } else {
                decision.sourceOffset = Int64(bitPattern: offset) &- 1
            }
        }
        let ordinal = try reader.varint()
        if flags & 64 != 0, ordinal < UInt64(UInt32.max) { decision.appOrdinal = UInt32(ordinal) }
        let arrival = try reader.varint()
        var decidedAt = Int64(bitPattern: try reader.varint())
        if decidedAtByDistance {
            // Decided-at as its distance below the record's timestamp.
            guard let writtenAt, decidedAt >= 0, decidedAt <= writtenAt else {
                throw StateFormatError(code: .malformed, message: "entry's decided-at without the record's timestamp")
            }
            decidedAt = writtenAt - decidedAt
        }
        let relevance = flags & 128 != 0 ? 0 : try reader.byte()
        var attributes = EntryAttributes(criteria: try reader.optionalString(), sender: nil)
        var item: SilencedItem?
        if flags & 8 != 0 {
            attributes.sender = try reader.optionalString()
            attributes.thread = try reader.optionalString()
            if try reader.byte() != 0 {
                guard let itemID = try reader.optionalString() else {
                    throw StateFormatError(code: .malformed, message: "summary item without an id")
                }
                let offset = Int64(bitPattern: try reader.varint()) &- 1
                item = SilencedItem(id: itemID, sourceOffset: offset, focus: try reader.optionalString())
                decision.summarizable = true
                if id == nil { decision.sourceOffset = offset }
            }
        } else if !reader.isAtEnd {
            guard let sender = try reader.optionalString(), !sender.isEmpty else {
                throw StateFormatError(code: .malformed, message: "empty sender")
            }
            attributes.sender = sender
        }
        let attributeNumber = self.attributes.intern(attributes)
        guard reader.isAtEnd, ordinal < UInt64(UInt32.max), arrival <= UInt64(UInt32.max) else {
            throw StateFormatError(code: .malformed, message: "entry value")
        }
        if let counts {
            guard flags & 1 != 0, ordinal > 0, counts.badge <= UInt64(UInt32.max) else {
                throw StateFormatError(code: .malformed, message: "app counts of an entry")
            }
            self.setRestoredCounts(
                user: user, ordinal: UInt32(ordinal), sequence: counts.sequence, badge: UInt32(counts.badge),
                countedUnder: countedUnder)
        }
        if let item, decision.focus == 0 { decision.focus = self.focusNumber(item.focus) }
        // The id: the key's, else (a key with its hash) the summary item's; written back under the key it came with.
        let span = id.map { self.storeID($0) } ?? item.map { self.storeID($0.id) } ?? IDSpan(start: 0, length: 0)
        decision.idStart = span.start
        decision.idLength = span.length
        decision.hashKeyed = id == nil || span.length == 0
        // Until finishRestore links them, `app` holds the app's ordinal (0: none).
        var entry = StateEntry.free
        entry.idHash = idHash
        entry.decidedAt = decidedAt
        entry.user = user
        entry.app = flags & 1 != 0 ? UInt32(ordinal) : 0
        entry.attributes = attributeNumber
        entry.arrival = UInt32(arrival)
        entry.flags =
            StateEntry.alive | (flags & 1 != 0 ? StateEntry.unread : 0) | (flags & 2 != 0 ? StateEntry.silenced : 0)
            | (flags & 4 != 0 ? StateEntry.summarized : 0)
        entry.relevance = relevance
        if let existing {
            self.entries[Int(existing)] = entry
            self.decisions[Int(existing)] = decision
        } else if self.freeEntry != StateIndex.none {
            let reused = self.freeEntry
            self.freeEntry = self.entries[Int(reused)].windowNext
            self.entries[Int(reused)] = entry
            self.decisions[Int(reused)] = decision
            self.indexEntry(reused)
            self.liveEntries += 1
        } else {
            self.entries.append(entry)
            self.decisions.append(decision)
            self.indexEntry(UInt32(self.entries.count - 1))
            self.liveEntries += 1
        }
    }

    private mutating func restoreApp(user: UInt32, ordinal: UInt32, isName: Bool, value: UnsafeRawBufferPointer?)
        throws(StateFormatError)
    {
        let found = self.findApp(user: user, ordinal: ordinal)
        guard let value else {
            guard let app = found else { return }
            if isName {
                self.apps[Int(app)].flags &= ~AppSlot.restoredName
            } else {
                self.apps[Int(app)].sequence = 0
                self.apps[Int(app)].badge = 0
                self.apps[Int(app)].countedFocus = 0
            }
            return
        }
        let app = found ?? self.makeApp(user: user, appID: "", ordinal: ordinal)
        if isName {
            self.appIDBySlot[Int(app)] = self.sharedAppID(String(decoding: value, as: UTF8.self))
            self.apps[Int(app)].appTag = Self.appTag(self.appIDBySlot[Int(app)])
            self.apps[Int(app)].flags |= AppSlot.restoredName
        } else {
            var reader = Reader(bytes: value)
            let sequence = try reader.varint()
            let badge = try reader.varint()
            // What the badge was counted under follows in records written since it is kept.
            let countedUnder = reader.isAtEnd ? nil : try reader.countedContext(focus: try reader.byte())
            guard reader.isAtEnd, badge <= UInt64(UInt32.max) else {
                throw StateFormatError(code: .malformed, message: "app counts value")
            }
            self.apps[Int(app)].sequence = sequence
            self.apps[Int(app)].badge = UInt32(badge)
            self.setCountedContext(app, countedUnder)
        }
    }

    /// A user's counts record: (ordinal, sequence, badge) per app that published.
    private mutating func restoreUserCounts(user: UInt32, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        guard let value else { return }
        var reader = Reader(bytes: value)
        // A leading zero: each app's counted context follows its counts (its Focus byte, `0`: none).
        let withCountedContext = value.first == 0
        if withCountedContext { reader.index = 1 }
        while !reader.isAtEnd {
            let ordinal = try reader.varint()
            let sequence = try reader.varint()
            let badge = try reader.varint()
            var countedUnder: CountedContext?
            if withCountedContext {
                let focus = try reader.byte()
                if focus != 0 { countedUnder = try reader.countedContext(focus: focus) }
            }
            guard ordinal > 0, ordinal < UInt64(UInt32.max), badge <= UInt64(UInt32.max) else {
                throw StateFormatError(code: .malformed, message: "user counts value")
            }
            self.setRestoredCounts(
                user: user, ordinal: UInt32(ordinal), sequence: sequence, badge: UInt32(badge),
                countedUnder: countedUnder)
        }
    }

    private mutating func setRestoredCounts(
        user: UInt32, ordinal: UInt32, sequence: UInt64, badge: UInt32, countedUnder: CountedContext?
    ) {
        let app = self.findApp(user: user, ordinal: ordinal) ?? self.makeApp(user: user, appID: "", ordinal: ordinal)
        self.apps[Int(app)].sequence = sequence
        self.apps[Int(app)].badge = badge
        self.setCountedContext(app, countedUnder)
    }

    /// What the app's badge was counted under, from its newest counts record: none in a record
    /// written before it was kept, and the first event recounts the app then.
    private mutating func setCountedContext(_ app: UInt32, _ countedUnder: CountedContext?) {
        self.apps[Int(app)].countedVersion = countedUnder?.version ?? .min
        self.apps[Int(app)].countedFocus = countedUnder?.focus ?? 0
    }

    /// Links what ``restore(key:value:)`` read: each user's entries in arrival order, the newest
    /// ``dedupeWindow`` as the window, the unread ones in their apps' lists; entries neither in a
    /// window nor unread, and apps without a name, are dropped. The result counts as committed;
    /// an app's badge is recounted at its next event only when the context differs from the one
    /// it was counted under (or that was not written: a record of an earlier version).
    public mutating func finishRestore() {
        self.restoreLastUser = StateIndex.none
        self.changes.removeAll()  // the apps' marks, reset below
        // Apps: only named ones stay, relinked per user.
        for user in self.users.indices { self.users[user].firstApp = StateIndex.none }
        self.freeApp = StateIndex.none
        for index in self.apps.indices.reversed() {
            if self.apps[index].has(AppSlot.restoredName) {
                let user = Int(self.apps[index].user)
                self.apps[index].flags = AppSlot.alive
                AppList.prepare(&self.apps[index], toPrecede: self.users[user])
                let ordinal = self.apps[index].ordinal
                AppList.push(UInt32(index), to: UInt32(user), owners: &self.users) {
                    $0.nextOrdinal = max($0.nextOrdinal, ordinal + 1)
                }
            } else {
                self.apps[index] = AppSlot(user: StateIndex.none, ordinal: 0)
                self.appIDBySlot[index] = ""
                self.apps[index].flags = 0
                self.apps[index].nextApp = self.freeApp
                self.freeApp = UInt32(index)
            }
        }
        // Entries: bucketed by user (counting sort), then by arrival within each user.
        var starts = [Int](repeating: 0, count: self.users.count + 1)
        for entry in self.entries where entry.has(StateEntry.alive) { starts[Int(entry.user) + 1] += 1 }
        for user in self.users.indices { starts[user + 1] += starts[user] }
        var order = [UInt32](repeating: 0, count: starts[self.users.count])
        var fill = starts
        for (index, entry) in self.entries.enumerated() where entry.has(StateEntry.alive) {
            order[fill[Int(entry.user)]] = UInt32(index)
            fill[Int(entry.user)] += 1
        }
        for user in self.users.indices {
            let range = starts[user]..<starts[user + 1]
            order[range].sort { self.entries[Int($0)].arrival < self.entries[Int($1)].arrival }
            self.linkRestored(user: UInt32(user), order[range])
        }
        // Unread dropped to a smaller `maxUnreadPerApp` are not written (each restore drops them
        // again), but their marks must go, or their later changes would never be listed.
        self.clearMarks(of: 0)
        self.userRecords.finishRestore()
        // Users whose records were all tombstones (the retention forgot them) or that hold
        // nothing else: their numbers are free for later users.
        for user in self.users.indices where !self.users[user].isFree && self.hasNothing(user: UInt32(user)) {
            self.freeUser(UInt32(user))
        }
        // Work that grows with the state is done here, on the restoring thread, rather than by the
        // worker at its first records: the ids kept once each (a key restored more than once left
        // its older id behind; and without a size after compaction, the first commit would compact
        // them all), and room in the entry table for as many entries again.
        self.compactIDs()
        self.table.reserve(2 * self.table.count)
        self.commitSlots()
    }

    private mutating func linkRestored(user: UInt32, _ entries: ArraySlice<UInt32>) {
        let windowStart = max(entries.startIndex, entries.endIndex - self.dedupeWindow)
        WindowLinks.setEnds(&self.users[Int(user)], head: StateIndex.none, tail: StateIndex.none, count: 0)
        var nextArrival: UInt32 = 0
        for position in entries.indices {
            let index = entries[position]
            var entry = self.entries[Int(index)]
            nextArrival = max(nextArrival, entry.arrival &+ 1)
            entry.windowNext = StateIndex.none
            entry.unreadNext = StateIndex.none
            let ordinal = entry.app
            entry.app = StateIndex.none
            if entry.has(StateEntry.unread), ordinal != 0, let app = self.findApp(user: user, ordinal: ordinal) {
                entry.app = app
                UnreadList.prepare(&entry, toFollow: self.apps[Int(app)])
                // Whether it counts is worked out when needed (see ``finishRestore()``).
                entry.flags |= StateEntry.countUnknown
            } else {
                entry.unreadPrev = StateIndex.none
                entry.flags &= ~StateEntry.unread
            }
            if position >= windowStart { entry.flags |= StateEntry.inWindow }
            self.entries[Int(index)] = entry
            if entry.has(StateEntry.unread) {
                UnreadList.append(index, to: entry.app, nodes: &self.entries, owners: &self.apps)
            }
            if entry.has(StateEntry.inWindow) {
                WindowList.append(index, to: user, nodes: &self.entries, owners: &self.users)
            }
            if !entry.has(StateEntry.inWindow) && !entry.has(StateEntry.unread) {
                self.unindex(index)
                self.entries[Int(index)] = .free
                self.entries[Int(index)].windowNext = self.freeEntry
                self.freeEntry = index
                self.liveEntries -= 1
            }
        }
        self.users[Int(user)].nextArrival = nextArrival
        var apps = AppList.walk(self.users[Int(user)])
        while let app = apps.next(in: self.apps) {
            // The badge published is what was counted under the context written with it, so
            // the count stands until the context differs; without that context, the app's next
            // event recounts it.
            if self.apps[Int(app)].countedFocus != 0 { self.apps[Int(app)].counted = self.apps[Int(app)].badge }
            // A smaller maxUnreadPerApp than the state was written with drops the oldest; whether
            // they counted is not known here, so the next event recounts the app.
            if self.apps[Int(app)].unread > self.maxUnreadPerApp {
                self.apps[Int(app)].countedFocus = 0
                self.apps[Int(app)].counted = 0
                while self.apps[Int(app)].unread > self.maxUnreadPerApp {
                    self.removeUnread(self.apps[Int(app)].unreadHead, context: nil, nowMilliseconds: 0)
                }
            }
        }
    }
}
