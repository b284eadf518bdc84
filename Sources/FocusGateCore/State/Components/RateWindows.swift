// MARK: - Rate-limit windows (docs/contract.md, Rate limits)

/// Deliveries of a user (or of one of the user's apps) in a rolling rate-limit window, counted in
/// ``slots`` slots of a twelfth of the window each, aligned to the Unix epoch (64 bytes): a
/// delivery counts for between 11/12 of the window and the whole window. A user's windows are a
/// list through ``next``: the user's own first, then one per app, at most ``maxAppWindows``.
struct RateWindow {
    static let slots = 12
    static let maxAppWindows = 16
    /// Deliveries per slot, at slot number mod ``slots``.
    var counts = InlineArray<12, UInt16>(repeating: 0)
    /// The newest slot number (record timestamp ÷ ``width``) counted.
    var newestSlot: Int64 = .min
    /// The slot width in milliseconds the counts were made with; `0`: nothing counted.
    var width: Int64 = 0
    /// The app's id hash (``PartitionState/appHash(_:)``); `0`: the user's own window.
    var appHash: UInt64
    var user: UInt32
    var next: UInt32 = StateIndex.none
    /// The sum of ``counts``, kept so that a window at its newest slot is counted without a loop.
    var total: UInt32 = 0
    /// Changed since the commit and listed in the changes once.
    var isDirty = false

    init(user: UInt32, appHash: UInt64) {
        self.user = user
        self.appHash = appHash
    }

    /// The most bytes a window takes in an `R` changelog record: its app hash, two varints of up
    /// to 10 bytes, the slot bitmask (2) and a count of up to 3 bytes per slot.
    static let maxEncodedBytes = 8 + 10 + 10 + 2 + 3 * Self.slots

    /// The slot width of a window, in milliseconds (at least 1).
    static func width(ofWindow milliseconds: Int64) -> Int64 { max(1, milliseconds / Int64(Self.slots)) }

    /// Deliveries counted at `time` (Unix ms) in a window of `windowMilliseconds`: the slots
    /// ending with the later of `time`'s slot and the newest slot counted, so a late record is
    /// judged by the window as it is now.
    func count(at time: Int64, windowMilliseconds: Int64) -> Int {
        let width = Self.width(ofWindow: windowMilliseconds)
        guard width == self.width else { return 0 }
        // The newest slot and the `slots - gap` before it are in the window ending at `time`'s
        // slot: the `gap` oldest fall out of the total.
        let gap = max(0, Self.slot(time, width) - self.newestSlot)
        guard gap < Int64(Self.slots) else { return 0 }
        var total = Int(self.total)
        var place = Self.place(self.newestSlot + 1)
        for _ in 0..<Int(gap) {
            total -= Int(self.counts[place])
            place = place == Self.slots - 1 ? 0 : place + 1
        }
        return total
    }

    /// Counts a delivery at `time`. A window of another width starts over.
    mutating func record(at time: Int64, windowMilliseconds: Int64) {
        let width = Self.width(ofWindow: windowMilliseconds)
        let slot = Self.slot(time, width)
        if width != self.width {
            self.counts = InlineArray(repeating: 0)
            self.total = 0
            self.width = width
            self.newestSlot = slot
        } else if slot > self.newestSlot {
            let cleared = min(slot - self.newestSlot, Int64(Self.slots))
            for step in 0..<cleared {
                let place = Self.place(slot - step)
                self.total -= UInt32(self.counts[place])
                self.counts[place] = 0
            }
            self.newestSlot = slot
        }
        let place = Self.place(max(slot, self.newestSlot - Int64(Self.slots) + 1))
        if self.counts[place] < UInt16.max {
            self.counts[place] += 1
            self.total += 1
        }
    }

    static func slot(_ time: Int64, _ width: Int64) -> Int64 {
        let quotient = time / width
        return time % width < 0 ? quotient - 1 : quotient
    }

    static func place(_ slot: Int64) -> Int {
        let remainder = Int(slot % Int64(Self.slots))
        return remainder < 0 ? remainder + Self.slots : remainder
    }
}

/// Where a user's rate windows for one app are (``RateWindows/find(user:appHash:)``):
/// found once per notification, for counting and then for noting the delivery.
struct RateWindowPlaces {
    /// The user's own window, or ``StateIndex/none``.
    var user = StateIndex.none
    /// The app's window, or ``StateIndex/none``.
    var app = StateIndex.none
    /// The user's last window, to append after.
    var last = StateIndex.none
    /// The other app window whose newest slot is oldest, to take over past the bound.
    var stalest = StateIndex.none
    /// How many windows of other apps the user has.
    var otherApps = 0
}

/// The partition's rate-limit windows: a user's list of windows (the user's own, then one per
/// app) is made by the first delivery a cap counts, and goes with the user. Its changelog record
/// is the user's `R`.
struct RateWindows: UserRecordComponent {
    static let recordKind = UInt8(ascii: "R")
    static let name = "rate windows"

    private(set) var windows = UndoableArray<RateWindow>()
    /// Each user's first window, which carries the mark of the user's record.
    private var headOfUser = PerUserSlots()
    private var free = FreeSlots()
    private var committedFree = 0
    /// Users whose record was marked since the commit.
    private var marked: [UInt32] = []

    /// Deliveries counted at `atMilliseconds` in the windows `places` found.
    @inline(__always)
    func delivered(in places: RateWindowPlaces, policy: RateLimitPolicy, atMilliseconds: Int64) -> RateCounts {
        var counts = RateCounts()
        if let cap = policy.perUser, places.user != StateIndex.none {
            counts.user = self.windows[Int(places.user)].count(
                at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
        }
        if let cap = policy.perApp, places.app != StateIndex.none {
            counts.app = self.windows[Int(places.app)].count(
                at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
        }
        return counts
    }

    /// The user's own window and the app's (`appHash`, ``PartitionState/appHash(_:)``), found in
    /// one walk of the user's windows, with what ``note(user:appHash:places:policy:atMilliseconds:)``
    /// needs to add one.
    @inline(__always)
    func find(user: UInt32, appHash: UInt64) -> RateWindowPlaces {
        var places = RateWindowPlaces()
        var stalestSlot = Int64.max
        var index = self.headOfUser[user]
        while index != StateIndex.none {
            let hash = self.windows[Int(index)].appHash
            if hash == 0 {
                places.user = index
            } else if hash == appHash {
                places.app = index
            } else {
                places.otherApps += 1
                let newest = self.windows[Int(index)].newestSlot
                if places.stalest == StateIndex.none || newest < stalestSlot {
                    places.stalest = index
                    stalestSlot = newest
                }
            }
            places.last = index
            index = self.windows[Int(index)].next
        }
        return places
    }

    /// Counts a delivery at `atMilliseconds` in the windows `policy` caps: the user's own and the
    /// app's, where ``find(user:appHash:)`` found them (or new ones). Past
    /// ``RateWindow/maxAppWindows`` app windows, the one whose newest slot is oldest is taken
    /// over, so the state per user stays bounded. Returns whether the user's record was marked by
    /// it (the caller lists the change).
    mutating func note(
        user: UInt32, appHash: UInt64, places: RateWindowPlaces, policy: RateLimitPolicy, atMilliseconds: Int64
    ) -> Bool {
        var userWindow = places.user
        var appWindow = places.app
        var last = places.last
        if let cap = policy.perUser {
            if userWindow == StateIndex.none {
                userWindow = self.append(user: user, appHash: 0, after: &last)
            }
            self.windows.modify(userWindow) {
                $0.record(at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
            }
        }
        if let cap = policy.perApp {
            if appWindow == StateIndex.none && places.otherApps >= RateWindow.maxAppWindows {
                appWindow = places.stalest
                let next = self.windows[Int(appWindow)].next
                self.windows.modify(appWindow) { window in
                    window = RateWindow(user: user, appHash: appHash)
                    window.next = next
                }
            } else if appWindow == StateIndex.none {
                appWindow = self.append(user: user, appHash: appHash, after: &last)
            }
            self.windows.modify(appWindow) {
                $0.record(at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
            }
        }
        // The user's first window carries the mark for the user's record.
        let head = self.headOfUser[user]
        guard policy.isActive, head != StateIndex.none, !self.windows[Int(head)].isDirty else { return false }
        self.windows.modify(head) { $0.isDirty = true }
        self.marked.append(user)
        return true
    }

    /// A new window at the end of the user's list (after `last`, which it becomes).
    private mutating func append(user: UInt32, appHash: UInt64, after last: inout UInt32) -> UInt32 {
        let made: UInt32
        if let reused = self.free.take() {
            made = reused
            self.windows.replace(made, with: RateWindow(user: user, appHash: appHash))
        } else {
            made = UInt32(self.windows.count)
            self.windows.append(RateWindow(user: user, appHash: appHash))
        }
        if last == StateIndex.none {
            self.headOfUser.set(user, to: made)
        } else {
            self.windows.modify(last) { $0.next = made }
        }
        last = made
        return made
    }

    // MARK: The component

    mutating func writeRecord<E: Error>(
        user: UInt32, userID: String, key: inout [UInt8], value: inout [UInt8],
        _ write: (_ key: [UInt8], _ value: [UInt8]?) throws(E) -> Void
    ) throws(E) {
        let head = self.headOfUser[user]
        guard head != StateIndex.none, self.windows[Int(head)].isDirty else { return }
        self.windows[Int(head)].isDirty = false
        Self.appendKey(kind: Self.recordKind, userID: userID, to: &key)
        self.encode(from: head, to: &value)
        try write(key, value)
    }

    /// The value of a user's `R` changelog record: per window, its app hash (8, LE; `0`: the
    /// user's own), slot width, newest slot, a bit per slot place that has a count, and those
    /// counts.
    private func encode(from head: UInt32, to value: inout [UInt8]) {
        // The closure below takes the windows alone: capturing `self` would copy the component.
        let windows = self.windows
        var count = 0
        var index = head
        while index != StateIndex.none {
            count += 1
            index = windows[Int(index)].next
        }
        value.appendBytes(atMost: count * RateWindow.maxEncodedBytes) { cursor in
            var index = head
            while index != StateIndex.none {
                let window = windows[Int(index)]
                cursor.writeLittleEndian(window.appHash)
                cursor.writeVarint(UInt64(window.width))
                cursor.writeVarint(UInt64(bitPattern: window.newestSlot))
                var present: UInt64 = 0
                for place in 0..<RateWindow.slots where window.counts[place] != 0 { present |= 1 << UInt64(place) }
                cursor.writeVarint(present)
                var places = present
                while places != 0 {
                    cursor.writeVarint(UInt64(window.counts[places.trailingZeroBitCount]))
                    places &= places - 1
                }
                index = window.next
            }
        }
    }

    mutating func restore(user: UInt32, kind: UInt8, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        var reader = PartitionState.Reader(bytes: value ?? UnsafeRawBufferPointer(start: nil, count: 0))
        var index = self.headOfUser[user]
        var last = StateIndex.none
        while !reader.isAtEnd {
            var window = RateWindow(user: user, appHash: 0)
            for shift in 0..<8 { window.appHash |= UInt64(try reader.byte()) << UInt64(shift * 8) }
            window.width = Int64(clamping: try reader.varint())
            window.newestSlot = Int64(bitPattern: try reader.varint())
            let present = try reader.varint()
            guard present >> UInt64(RateWindow.slots) == 0 else {
                throw StateFormatError(code: .malformed, message: "rate window slot out of range")
            }
            for place in 0..<RateWindow.slots where present & (1 << UInt64(place)) != 0 {
                window.counts[place] = UInt16(clamping: try reader.varint())
                window.total += UInt32(window.counts[place])
            }
            if index == StateIndex.none {
                index = UInt32(self.windows.count)
                self.windows.append(window)
                if last == StateIndex.none {
                    self.headOfUser.set(user, to: index)
                } else {
                    self.windows.modify(last) { $0.next = index }
                }
            } else {
                window.next = self.windows[Int(index)].next
                self.windows.replace(index, with: window)
            }
            last = index
            index = window.next
        }
        // Windows the record no longer lists count nothing.
        while index != StateIndex.none {
            let next = self.windows[Int(index)].next
            var emptied = RateWindow(user: user, appHash: self.windows[Int(index)].appHash)
            emptied.next = next
            self.windows.replace(index, with: emptied)
            index = next
        }
    }

    mutating func commit() {
        self.clearMarks()
        self.windows.commit()
        self.headOfUser.commit()
        self.committedFree = self.free.count
    }

    mutating func rollBack() {
        self.windows.rollBack()
        self.headOfUser.rollBack()
        self.free.rollBack(to: self.committedFree)
        self.clearMarks()
    }

    private mutating func clearMarks() {
        for user in self.marked {
            let head = self.headOfUser[user]
            if head != StateIndex.none { self.windows[Int(head)].isDirty = false }
        }
        self.marked.removeAll(keepingCapacity: true)
    }

    mutating func forget(user: UInt32) {
        var window = self.headOfUser[user]
        while window != StateIndex.none {
            let next = self.windows[Int(window)].next
            self.windows.replace(window, with: RateWindow(user: StateIndex.none, appHash: 0))
            self.free.free(window)
            window = next
        }
        self.headOfUser.set(user, to: StateIndex.none)
    }

    var markedUsers: [UInt32] {
        self.headOfUser.assigned.filter { self.windows[Int($0.slot)].isDirty }.map(\.user)
    }

    var violations: [String] {
        var found = self.windows.violations + self.headOfUser.violations.map { "by user: \($0)" }
        for (user, head) in self.headOfUser.assigned {
            var index = head
            var steps = 0
            while index != StateIndex.none && steps <= RateWindow.maxAppWindows + 1 {
                guard Int(index) < self.windows.count else {
                    found.append("user \(user)'s window \(index) is past the windows")
                    break
                }
                if self.windows[Int(index)].user != user {
                    found.append("user \(user)'s window \(index) is user \(self.windows[Int(index)].user)'s")
                }
                index = self.windows[Int(index)].next
                steps += 1
            }
            if steps > RateWindow.maxAppWindows + 1 {
                found.append("user \(user) has more than \(RateWindow.maxAppWindows + 1) windows")
            }
        }
        return found
    }
}

extension PartitionState {
    /// Deliveries counted in the user's windows at `atMilliseconds` (a record timestamp, so that
    /// a replay counts alike): the user's own window and the (user, app)'s, under `policy`'s caps.
    public func delivered(userID: String, appID: String, policy: RateLimitPolicy, atMilliseconds: Int64)
        -> RateCounts
    {
        guard let user = self.userNumber(userID) else { return RateCounts() }
        let windows = self.userRecords.rateWindows
        return windows.delivered(
            in: windows.find(user: user, appHash: policy.perApp == nil ? 0 : Self.appHash(appID)), policy: policy,
            atMilliseconds: atMilliseconds)
    }
}
