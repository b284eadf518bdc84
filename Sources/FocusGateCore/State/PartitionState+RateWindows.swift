// MARK: - Rate-limit windows

extension PartitionState {
    /// Deliveries counted in the user's windows at `atMilliseconds` (a record timestamp, so that
    /// a replay counts alike): the user's own window and the (user, app)'s, under `policy`'s caps.
    public func delivered(userID: String, appID: String, policy: RateLimitPolicy, atMilliseconds: Int64)
        -> RateCounts
    {
        guard let user = self.userNumbers[userID] else { return RateCounts() }
        return self.delivered(
            user: user, appHash: policy.perApp == nil ? 0 : Self.appHash(appID), policy: policy,
            atMilliseconds: atMilliseconds)
    }

    /// ``delivered(userID:appID:policy:atMilliseconds:)`` for an interned user, with the app's
    /// ``appHash(_:)`` (`0` when `policy` sets no per-app cap).
    func delivered(user: UInt32, appHash: UInt64, policy: RateLimitPolicy, atMilliseconds: Int64) -> RateCounts {
        var counts = RateCounts()
        var index = self.users[Int(user)].rateWindow
        while index != StateIndex.none {
            let window = self.rateWindows[Int(index)]
            if window.appHash == 0, let cap = policy.perUser {
                counts.user = window.count(at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
            } else if window.appHash == appHash, let cap = policy.perApp {
                counts.app = window.count(at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
            }
            index = window.next
        }
        return counts
    }

    /// Counts a delivery at `atMilliseconds` in the windows `policy` caps: the user's own and the
    /// app's, found (or made) in one walk of the user's windows. Past ``RateWindow/maxAppWindows``
    /// app windows, the one whose newest slot is oldest is taken over, so the state per user stays
    /// bounded.
    mutating func noteDelivery(user: UInt32, appHash: UInt64, policy: RateLimitPolicy, atMilliseconds: Int64) {
        var userWindow = StateIndex.none
        var appWindow = StateIndex.none
        var last = StateIndex.none
        var otherApps = 0
        var stalest = StateIndex.none
        var index = self.users[Int(user)].rateWindow
        while index != StateIndex.none {
            let window = self.rateWindows[Int(index)]
            if window.appHash == 0 {
                userWindow = index
            } else if window.appHash == appHash {
                appWindow = index
            } else {
                otherApps += 1
                if stalest == StateIndex.none || window.newestSlot < self.rateWindows[Int(stalest)].newestSlot {
                    stalest = index
                }
            }
            last = index
            index = window.next
        }
        if let cap = policy.perUser {
            if userWindow == StateIndex.none {
                userWindow = self.appendRateWindow(user: user, appHash: 0, after: &last)
            }
            self.modifyRateWindow(userWindow) {
                $0.record(at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
            }
        }
        if let cap = policy.perApp {
            if appWindow == StateIndex.none && otherApps >= RateWindow.maxAppWindows {
                appWindow = stalest
                let next = self.rateWindows[Int(stalest)].next
                self.modifyRateWindow(stalest) { window in
                    window = RateWindow(user: user, appHash: appHash)
                    window.next = next
                }
            } else if appWindow == StateIndex.none {
                appWindow = self.appendRateWindow(user: user, appHash: appHash, after: &last)
            }
            self.modifyRateWindow(appWindow) {
                $0.record(at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
            }
        }
    }

    /// A new window at the end of the user's list (after `last`, which it becomes).
    private mutating func appendRateWindow(user: UInt32, appHash: UInt64, after last: inout UInt32) -> UInt32 {
        let made = UInt32(self.rateWindows.count)
        self.rateWindows.append(RateWindow(user: user, appHash: appHash))
        if last == StateIndex.none {
            self.modifyUser(user) { $0.rateWindow = made }
        } else {
            self.modifyRateWindow(last) { $0.next = made }
        }
        last = made
        return made
    }

    /// Changes a window, keeping its before-image (when it existed at the commit) and listing the
    /// user's record in the changes once per commit.
    private mutating func modifyRateWindow(_ index: UInt32, _ body: (inout RateWindow) -> Void) {
        let window = self.rateWindows[Int(index)]
        if Int(index) < self.committed.rateWindows { self.undo.append(.rate(index, window)) }
        body(&self.rateWindows[Int(index)])
        // The user's first window carries the mark for the user's record.
        let head = Int(self.users[Int(window.user)].rateWindow)
        if !self.rateWindows[head].isDirty {
            self.rateWindows[head].isDirty = true
            self.changes.append(.rateWindows(user: window.user))
        }
    }

    // MARK: Changelog

    /// The value of a user's `R` changelog record: per window, its app hash (8, LE; `0`: the
    /// user's own), slot width, newest slot, a bit per slot place that has a count, and those
    /// counts.
    func encodeRateWindows(user: UInt32, to value: inout [UInt8]) {
        var index = self.users[Int(user)].rateWindow
        while index != StateIndex.none {
            let window = self.rateWindows[Int(index)]
            withUnsafeBytes(of: window.appHash.littleEndian) { value.append(contentsOf: $0) }
            Self.writeVarint(UInt64(window.width), to: &value)
            Self.writeVarint(UInt64(bitPattern: window.newestSlot), to: &value)
            var present: UInt64 = 0
            for place in 0..<RateWindow.slots where window.counts[place] != 0 { present |= 1 << UInt64(place) }
            Self.writeVarint(present, to: &value)
            var places = present
            while places != 0 {
                Self.writeVarint(UInt64(window.counts[places.trailingZeroBitCount]), to: &value)
                places &= places - 1
            }
            index = window.next
        }
    }

    mutating func restoreRateWindows(userID: String, value: [UInt8]?) throws(StateFormatError) {
        let user = self.internUser(userID)
        var reader = Reader(bytes: value ?? [])
        var index = self.users[Int(user)].rateWindow
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
            }
            if index == StateIndex.none {
                index = UInt32(self.rateWindows.count)
                self.rateWindows.append(window)
                if last == StateIndex.none {
                    self.users[Int(user)].rateWindow = index
                } else {
                    self.rateWindows[Int(last)].next = index
                }
            } else {
                window.next = self.rateWindows[Int(index)].next
                self.rateWindows[Int(index)] = window
            }
            last = index
            index = window.next
        }
        // Windows the record no longer lists count nothing.
        while index != StateIndex.none {
            let next = self.rateWindows[Int(index)].next
            self.rateWindows[Int(index)] = RateWindow(user: user, appHash: self.rateWindows[Int(index)].appHash)
            self.rateWindows[Int(index)].next = next
            index = next
        }
    }

    /// The stable hash of an app id: 64-bit FNV-1a of its UTF-8 bytes, never `0` (the user's own window).
    static func appHash(_ appID: String) -> UInt64 {
        let hash = StableHash.fnv1a(appID, basis: 0x9ae1_6a3b_2f90_404f)
        return hash == 0 ? 1 : hash
    }
}
