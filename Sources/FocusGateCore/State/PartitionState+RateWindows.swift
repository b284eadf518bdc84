// MARK: - Rate-limit windows

extension PartitionState {
    /// Deliveries counted in the user's windows at `atMilliseconds` (a record timestamp, so that
    /// a replay counts alike): the user's own window and the (user, app)'s, under `policy`'s caps.
    public func delivered(userID: String, appID: String, policy: RateLimitPolicy, atMilliseconds: Int64)
        -> RateCounts
    {
        guard let user = self.userNumber(userID) else { return RateCounts() }
        return self.delivered(
            user: user, appHash: policy.perApp == nil ? 0 : Self.appHash(appID), policy: policy,
            atMilliseconds: atMilliseconds)
    }

    /// ``delivered(userID:appID:policy:atMilliseconds:)`` for an interned user, with the app's
    /// ``appHash(_:)`` (`0` when `policy` sets no per-app cap).
    func delivered(user: UInt32, appHash: UInt64, policy: RateLimitPolicy, atMilliseconds: Int64) -> RateCounts {
        self.delivered(
            in: self.findRateWindows(user: user, appHash: appHash), policy: policy, atMilliseconds: atMilliseconds)
    }

    /// Deliveries counted at `atMilliseconds` in the windows `places` found.
    @inline(__always)
    func delivered(in places: RateWindowPlaces, policy: RateLimitPolicy, atMilliseconds: Int64) -> RateCounts {
        var counts = RateCounts()
        if let cap = policy.perUser, places.user != StateIndex.none {
            counts.user = self.rateWindows[Int(places.user)].count(
                at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
        }
        if let cap = policy.perApp, places.app != StateIndex.none {
            counts.app = self.rateWindows[Int(places.app)].count(
                at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
        }
        return counts
    }

    /// The user's own window and the app's (`appHash`), found in one walk of the user's windows,
    /// with what ``noteDelivery(user:appHash:places:policy:atMilliseconds:)`` needs to add one.
    @inline(__always)
    func findRateWindows(user: UInt32, appHash: UInt64) -> RateWindowPlaces {
        var places = RateWindowPlaces()
        var stalestSlot = Int64.max
        var index = self.users[Int(user)].rateWindow
        while index != StateIndex.none {
            let hash = self.rateWindows[Int(index)].appHash
            if hash == 0 {
                places.user = index
            } else if hash == appHash {
                places.app = index
            } else {
                places.otherApps += 1
                let newest = self.rateWindows[Int(index)].newestSlot
                if places.stalest == StateIndex.none || newest < stalestSlot {
                    places.stalest = index
                    stalestSlot = newest
                }
            }
            places.last = index
            index = self.rateWindows[Int(index)].next
        }
        return places
    }

    /// Counts a delivery at `atMilliseconds` in the windows `policy` caps: the user's own and the
    /// app's, where ``findRateWindows(user:appHash:)`` found them (or new ones). Past
    /// ``RateWindow/maxAppWindows`` app windows, the one whose newest slot is oldest is taken
    /// over, so the state per user stays bounded.
    mutating func noteDelivery(
        user: UInt32, appHash: UInt64, places: RateWindowPlaces, policy: RateLimitPolicy, atMilliseconds: Int64
    ) {
        var userWindow = places.user
        var appWindow = places.app
        var last = places.last
        if let cap = policy.perUser {
            if userWindow == StateIndex.none {
                userWindow = self.appendRateWindow(user: user, appHash: 0, after: &last)
            }
            self.modifyRateWindow(userWindow) {
                $0.record(at: atMilliseconds, windowMilliseconds: cap.windowMilliseconds)
            }
        }
        if let cap = policy.perApp {
            if appWindow == StateIndex.none && places.otherApps >= RateWindow.maxAppWindows {
                appWindow = places.stalest
                let next = self.rateWindows[Int(appWindow)].next
                self.modifyRateWindow(appWindow) { window in
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
        let made: UInt32
        if let reused = self.freeRateWindows.take() {
            made = reused
            self.rateWindows.replace(made, with: RateWindow(user: user, appHash: appHash))
        } else {
            made = UInt32(self.rateWindows.count)
            self.rateWindows.append(RateWindow(user: user, appHash: appHash))
        }
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
        self.rateWindows.modify(index, body)
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
        // The closure below takes the windows alone: capturing `self` would copy the whole state.
        let rateWindows = self.rateWindows
        let head = self.users[Int(user)].rateWindow
        var windows = 0
        var index = head
        while index != StateIndex.none {
            windows += 1
            index = rateWindows[Int(index)].next
        }
        value.appendBytes(atMost: windows * RateWindow.maxEncodedBytes) { cursor in
            var index = head
            while index != StateIndex.none {
                let window = rateWindows[Int(index)]
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

    mutating func restoreRateWindows(user: UInt32, value: UnsafeRawBufferPointer?) throws(StateFormatError) {
        var reader = Reader(bytes: value ?? UnsafeRawBufferPointer(start: nil, count: 0))
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
                window.total += UInt32(window.counts[place])
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
