// MARK: - Rate-limit windows

extension PartitionState {
    /// Deliveries counted in the user's windows at `atMilliseconds` (a record timestamp, so that
    /// a replay counts alike): the user's own window and the (user, app)'s, under `policy`'s caps.
    public func delivered(userID: String, appID: String, policy: RateLimitPolicy, atMilliseconds: Int64)
        -> RateCounts
    {
        guard let user = self.userNumbers[userID] else { return RateCounts() }
        var counts = RateCounts()
        let appHash = policy.perApp == nil ? 0 : Self.appHash(appID)
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

    /// Counts a delivery at `atMilliseconds` in the windows `policy` caps.
    mutating func noteDelivery(user: UInt32, appID: String, policy: RateLimitPolicy, atMilliseconds: Int64) {
        if let cap = policy.perUser {
            self.recordDelivery(user: user, appHash: 0, cap: cap, atMilliseconds: atMilliseconds)
        }
        if let cap = policy.perApp {
            self.recordDelivery(user: user, appHash: Self.appHash(appID), cap: cap, atMilliseconds: atMilliseconds)
        }
    }

    private mutating func recordDelivery(
        user: UInt32, appHash: UInt64, cap: RateLimitPolicy.Cap, atMilliseconds: Int64
    ) {
        let index = self.rateWindow(user: user, appHash: appHash)
        self.modifyRateWindow(index) { $0.record(at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds) }
    }

    /// The user's window for `appHash` (`0`: the user's own): found, made, or, past
    /// ``RateWindow/maxAppWindows`` app windows, the app window with the oldest newest slot
    /// taken over, so the state per user stays bounded.
    private mutating func rateWindow(user: UInt32, appHash: UInt64) -> UInt32 {
        var index = self.users[Int(user)].rateWindow
        var last = StateIndex.none
        var appWindows = 0
        var stalest = StateIndex.none
        while index != StateIndex.none {
            let window = self.rateWindows[Int(index)]
            if window.appHash == appHash { return index }
            if window.appHash != 0 {
                appWindows += 1
                if stalest == StateIndex.none || window.newestSlot < self.rateWindows[Int(stalest)].newestSlot {
                    stalest = index
                }
            }
            last = index
            index = window.next
        }
        if appHash != 0 && appWindows >= RateWindow.maxAppWindows {
            let next = self.rateWindows[Int(stalest)].next
            self.modifyRateWindow(stalest) { window in
                window = RateWindow(user: user, appHash: appHash)
                window.next = next
            }
            return stalest
        }
        let made = UInt32(self.rateWindows.count)
        self.rateWindows.append(RateWindow(user: user, appHash: appHash))
        if last == StateIndex.none {
            self.modifyUser(user) { $0.rateWindow = made }
        } else {
            self.modifyRateWindow(last) { $0.next = made }
        }
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
    /// user's own), slot width, newest slot and the twelve counts.
    func encodeRateWindows(user: UInt32, to value: inout [UInt8]) {
        var index = self.users[Int(user)].rateWindow
        while index != StateIndex.none {
            let window = self.rateWindows[Int(index)]
            withUnsafeBytes(of: window.appHash.littleEndian) { value.append(contentsOf: $0) }
            Self.writeVarint(UInt64(window.width), to: &value)
            Self.writeVarint(UInt64(bitPattern: window.newestSlot), to: &value)
            for place in 0..<RateWindow.slots { Self.writeVarint(UInt64(window.counts[place]), to: &value) }
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
            for place in 0..<RateWindow.slots {
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
        var hash: UInt64 = 0x9ae1_6a3b_2f90_404f
        for byte in appID.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash == 0 ? 1 : hash
    }
}
