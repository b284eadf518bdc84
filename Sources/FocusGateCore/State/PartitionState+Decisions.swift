// MARK: - Deciding with the state

extension PartitionState {
    /// Decides a `notification` event with what the state knows of its user, then applies it: the
    /// record loop's one call per notification.
    ///
    /// A duplicate (an id the user's dedupe window holds) is known first and costs no decision;
    /// otherwise ``FocusDecider/decide(_:lookup:nowMilliseconds:rateLimits:senderHash:repeatedSender:delivered:)``
    /// with the repeated senders and the rate windows the state keeps, both by the record
    /// timestamp so that a replay decides alike, then the state's update.
    ///
    /// - Parameters:
    ///   - event: A `notification` event.
    ///   - lookup: The user's context.
    ///   - defaultRateLimits: The configured caps, for a user whose context sets none.
    ///   - repeatedWindowMilliseconds: `people.repeatedWindowSeconds`, in milliseconds.
    ///   - nowMilliseconds: The decision time, for expiry and `decided-at`.
    ///   - sentAtMilliseconds: The record timestamp.
    ///   - sourceOffset: The record's offset in the partition, kept with the notification for its
    ///     user's history and summaries; `-1`: not known.
    ///   - userHash: The user id's ``IdentifierIndex/hash(_:)`` when the caller has it (a worker
    ///     hashes it once per record, for its context cache and for this); `nil`: hashed here.
    /// - Returns: The decision (`nil` for a duplicate), and whether the event was a duplicate
    ///   (then nothing changed).
    public mutating func decide(
        _ event: NotificationEvent, lookup: ContextLookup, defaultRateLimits: RateLimitPolicy,
        repeatedWindowMilliseconds: Int64, nowMilliseconds: Int64, sentAtMilliseconds: Int64, sourceOffset: Int64 = -1,
        userHash: UInt64? = nil
    ) -> (decision: Decision?, admission: Admission) {
        let user = self.internUser(event.userID, hash: userHash)
        // The next change of the Focus in force is a timer of the partition, and the user's
        // status is noted when it changed: both committed with the partition, worked out again
        // only under a new context version (within one, the timer brings the changes).
        if case .available(let context) = lookup {
            self.followFocusIfChanged(user: user, context: context, nowMilliseconds: nowMilliseconds)
        }
        let idHash = Self.idHash(event.identifier)
        if self.findEntry(user: user, idHash: idHash) != nil { return (nil, .duplicate) }
        // The sender, the app's hash and the user's rate windows are found once, for the decision
        // and then for the update.
        let senderHash = event.senderID.map(Self.senderHash)
        var appHash: UInt64 = 0
        var windows = RateWindowPlaces()
        let ruling = FocusDecider.decide(
            event, lookup: lookup, nowMilliseconds: nowMilliseconds, rateLimits: defaultRateLimits,
            senderHash: senderHash,
            repeatedSender: {
                senderHash.map {
                    self.userRecords.senders.isRepeated(
                        user: user, senderHash: $0, atMilliseconds: sentAtMilliseconds,
                        windowMilliseconds: repeatedWindowMilliseconds)
                } == true
            },
            delivered: { limits in
                if limits.perApp != nil { appHash = Self.appHash(event.appID) }
                windows = self.userRecords.rateWindows.find(user: user, appHash: appHash)
                return self.userRecords.rateWindows.delivered(
                    in: windows, policy: limits, atMilliseconds: sentAtMilliseconds)
            })
        let decision = ruling.decision
        let silenced = decision.outcome == .silenced
        // What the history keeps of it: the Focus it names, else (silenced) the one on.
        let focus = self.focusNumber(
            decision.focus ?? (silenced ? ruling.context?.focusOn(atMilliseconds: nowMilliseconds) : nil))
        let admission = self.admitNotification(
            event, user: user, idHash: idHash, senderHash: senderHash, appHash: appHash,
            context: ruling.context, nowMilliseconds: nowMilliseconds, silenced: silenced,
            countsInBadge: ruling.countsInBadge,
            decided: (UInt8(decision.reason.index + 1), decision.contextVersion ?? .min, focus),
            sentAtMilliseconds: sentAtMilliseconds, rateLimits: ruling.rateLimits, rateWindows: windows,
            sourceOffset: sourceOffset)
        return (decision, admission)
    }
}
