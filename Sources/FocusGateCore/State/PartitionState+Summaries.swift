// MARK: - Summaries: what a Focus silenced, when its period ends and at summary times

extension PartitionState {
    /// Summaries made since the last commit, to publish with it.
    public var pendingSummaries: [FocusSummary] { self.summaries }

    /// Sums up the user's silenced notifications that are still unread and no summary has listed:
    /// those silenced under a Focus that is not on (its period has ended), and, at one of the
    /// user's summary times, all of them. One summary per Focus that silenced them; each
    /// notification is listed once, ever (``StateEntry/summarized``).
    ///
    /// Called wherever the user's Focus may have changed: context changes, fired timers, and a
    /// decision under a new context version. Walks the user's unread notifications only.
    /// `timerAt` is the instant of the user's timer when one fired: the summaries are made at it,
    /// so a replay makes the same ones. Otherwise a context change ended the period at
    /// `nowMilliseconds`, and the summary's id comes from the context's version instead, which a
    /// replay applying the change later shares.
    mutating func summarizeSilenced(
        user: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64, timerAt: Int64?
    ) {
        let at = timerAt ?? nowMilliseconds
        let isSummaryTime = timerAt.map { context?.isSummaryTime($0) ?? false } ?? false
        // A user without summaries has no items; one without them at a Focus's end waits for a summary time.
        guard let policy = context?.summaries, policy.atFocusEnd || isSummaryTime else { return }
        let focusNow = context?.inForce(atMilliseconds: at).focusOn(atMilliseconds: at)
        var picked: [(entry: UInt32, item: SilencedItem)] = []
        var apps = AppList.walk(self.users[Int(user)])
        while let app = apps.next(in: self.apps) {
            var unread = UnreadList.walk(self.apps[Int(app)])
            while let entry = unread.next(in: self.entries) {
                let candidate = self.entries[Int(entry)]
                if candidate.has(StateEntry.silenced) && !candidate.has(StateEntry.summarized),
                    let item = self.summaryItem(at: entry),
                    isSummaryTime || (policy.atFocusEnd && item.focus != nil && item.focus != focusNow)
                {
                    picked.append((entry, item))
                }
            }
        }
        guard !picked.isEmpty else { return }
        // One summary per Focus that silenced them: none (a rate limit) first, then by name.
        let byFocus = Dictionary(grouping: picked, by: \.item.focus)
        for focus in byFocus.keys.sorted(by: { ($0 == nil ? 0 : 1, $0 ?? "") < ($1 == nil ? 0 : 1, $1 ?? "") }) {
            let ended = policy.atFocusEnd && focus != nil && focus != focusNow
            self.summaries.append(
                self.summary(
                    of: byFocus[focus]!, user: user, focus: focus, trigger: ended ? .focusEnded : .summaryTime,
                    atMilliseconds: at, end: timerAt.map { "\($0)" } ?? context.map { "v\($0.version)" } ?? "\(at)",
                    contextVersion: context?.version))
        }
        for (entry, _) in picked {
            self.modifyEntry(entry) { $0.flags |= StateEntry.summarized }
            self.markEntry(entry)
        }
    }

    /// What a summary lists of a silenced entry; `nil` for one silenced while the user wanted no
    /// summaries, or restored from a record without its id.
    func summaryItem(at entry: UInt32) -> SilencedItem? {
        let record = self.decisions[Int(entry)]
        guard record.summarizable, let id = self.notificationID(of: record) else { return nil }
        return SilencedItem(id: id, sourceOffset: record.sourceOffset, focus: self.focusName(record.focus))
    }

    /// Appends an id's bytes to ``idBytes``; length `0` (not kept) past 65,535 bytes.
    mutating func storeID(_ id: String) -> IDSpan {
        var id = id
        return id.withUTF8 { self.storeID(UnsafeRawBufferPointer($0)) }
    }

    mutating func storeID(_ bytes: UnsafeRawBufferPointer) -> IDSpan {
        guard bytes.count <= Int(UInt16.max) else { return IDSpan(start: 0, length: 0) }
        let start = UInt32(self.idBytes.count)
        // As typed bytes: the contiguous append, one copy (the raw buffer's goes byte by byte).
        bytes.withMemoryRebound(to: UInt8.self) { self.idBytes.append(contentsOf: $0) }
        return IDSpan(start: start, length: UInt16(bytes.count))
    }

    /// The notification id of a decision record; `nil` when it is not known.
    func notificationID(of record: DecisionRecord) -> String? {
        guard record.hasID else { return nil }
        return self.idBytes.withUnsafeBufferPointer {
            String(decoding: $0[Int(record.idStart)..<Int(record.idStart) + Int(record.idLength)], as: UTF8.self)
        }
    }

    /// Whether a decision record's id is `id`.
    func hasID(_ record: DecisionRecord, _ id: String) -> Bool {
        var id = id
        return id.withUTF8 { bytes in
            bytes.count == Int(record.idLength)
                && self.idBytes.withUnsafeBufferPointer {
                    bytes.elementsEqual($0[Int(record.idStart)..<Int(record.idStart) + bytes.count])
                }
        }
    }

    /// Rebuilds ``idBytes`` from the ids of the live entries (right after a commit, when no
    /// before-image or change holds an old place).
    mutating func compactIDs() {
        var compacted: [UInt8] = []
        compacted.reserveCapacity(self.idBytes.count / 2)
        // Through buffers: an array's element access checks uniqueness and bounds per id.
        self.idBytes.withUnsafeBufferPointer { ids in
            self.entries.withUnsafeBufferPointer { entries in
                self.decisions.withUnsafeMutableBufferPointer { decisions in
                    for index in entries.indices where entries[index].has(StateEntry.alive) && decisions[index].hasID {
                        let start = Int(decisions[index].idStart)
                        decisions[index].idStart = UInt32(compacted.count)
                        compacted.append(
                            contentsOf: UnsafeBufferPointer(
                                rebasing: ids[start..<start + Int(decisions[index].idLength)]))
                    }
                }
            }
        }
        self.idBytes = compacted
        self.idBytesAfterCompaction = compacted.count
    }

    /// The number of a Focus name in ``focusNames`` + 1 (`0`: none), adding it when new. A
    /// partition sees few names: past 65,534 of them, the rest are not kept.
    mutating func focusNumber(_ name: String?) -> UInt16 {
        guard let name else { return 0 }
        // Most decisions in a row are under the same Focus: a comparison instead of a hash.
        if self.lastFocus != 0 && self.focusNames[Int(self.lastFocus) - 1] == name { return self.lastFocus }
        if let number = self.focusNumbers[name] {
            self.lastFocus = number
            return number
        }
        guard self.focusNames.count < Int(UInt16.max) - 1 else { return 0 }
        self.focusNames.append(name)
        self.focusBytes.append(Array(name.utf8))
        self.focusCodes.append(Self.wellKnownFocusNames.firstIndex(of: name).map { UInt8($0 + 1) } ?? 0)
        let number = UInt16(self.focusNames.count)
        self.focusNumbers[name] = number
        self.lastFocus = number
        return number
    }

    func focusName(_ number: UInt16) -> String? {
        number == 0 ? nil : self.focusNames[Int(number) - 1]
    }

    /// The Focus names the system offers, which most decisions are made under: the changelog
    /// writes one of them as a byte, its index + 1 (a decision record's reason byte says so).
    /// The order is part of the changelog form: names are only ever added at the end.
    static let wellKnownFocusNames = [
        "Do Not Disturb", "Personal", "Work", "Sleep", "Driving", "Fitness", "Gaming", "Mindfulness", "Reading",
        "Reduce Interruptions",
    ]

    /// A Focus number's code among ``wellKnownFocusNames`` (`0`: none, or not one of them).
    func wellKnownFocusCode(_ number: UInt16) -> UInt8 {
        number == 0 ? 0 : self.focusCodes[Int(number) - 1]
    }

    /// A decision's Focus as the changelog writes a string (length + 1 and its bytes, `0`: none),
    /// from the name's UTF-8 bytes kept beside it: no String copied per record.
    func writeFocus(_ number: UInt16, to value: inout [UInt8]) {
        guard number != 0 else { return value.append(0) }
        let bytes = self.focusBytes[Int(number) - 1]
        Self.writeVarint(UInt64(bytes.count) + 1, to: &value)
        value.append(contentsOf: bytes)
    }

    private func summary(
        of picked: [(entry: UInt32, item: SilencedItem)], user: UInt32, focus: String?, trigger: FocusSummary.Trigger,
        atMilliseconds at: Int64, end: String, contextVersion: Int64?
    ) -> FocusSummary {
        let userID = self.userIDByNumber[Int(user)]
        var apps: [FocusSummary.App] = []
        let byApp = Dictionary(grouping: picked) { self.entries[Int($0.entry)].app }
        for (app, members) in byApp.sorted(by: { self.appIDBySlot[Int($0.key)] < self.appIDBySlot[Int($1.key)] }) {
            var threads: [String: Int] = [:]
            for member in members {
                if let thread = self.attributes[self.entries[Int(member.entry)].attributes].thread {
                    threads[thread, default: 0] += 1
                }
            }
            // Most relevant first (no score counts as the least), then oldest first.
            let top = members.sorted { lhs, rhs in
                let left = self.entries[Int(lhs.entry)]
                let right = self.entries[Int(rhs.entry)]
                return left.relevance != right.relevance
                    ? left.relevance > right.relevance : left.arrival < right.arrival
            }.prefix(self.summaryItemsPerApp)
            apps.append(
                FocusSummary.App(
                    appID: self.appIDBySlot[Int(app)], total: members.count,
                    threads: threads.map { FocusSummary.ThreadTotal(threadID: $0.key, total: $0.value) }
                        .sorted { $0.total != $1.total ? $0.total > $1.total : $0.threadID < $1.threadID },
                    top: top.map { member in
                        let entry = self.entries[Int(member.entry)]
                        return FocusSummary.Item(
                            id: member.item.id,
                            relevanceScore: entry.relevance == 0 ? nil : Double(entry.relevance - 1) / 254,
                            sourceOffset: member.item.sourceOffset, decidedAtMilliseconds: entry.decidedAt)
                    }))
        }
        return FocusSummary(
            summaryID: FocusSummary.summaryID(userID: userID, trigger: trigger, focus: focus, end: end),
            userID: userID, trigger: trigger, focus: focus,
            periodStartMilliseconds: picked.map { self.entries[Int($0.entry)].decidedAt }.min()!,
            periodEndMilliseconds: at, contextVersion: contextVersion, total: picked.count, apps: apps)
    }
}
