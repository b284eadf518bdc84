// MARK: - Deciding with the state

extension PartitionState {
    /// Decides a `notification` event with what the state knows of its user, then applies it: the
    /// record loop's one call per notification.
    ///
    /// The Focus rules (``FocusDecider/decide(_:repeatedSender:lookup:nowMilliseconds:)``) with
    /// the repeated-sender breakthrough, then rate limits (``FocusDecider/rateLimitHit(_:interruptionLevel:senderList:policy:delivered:)``);
    /// both go by the record timestamp, so that a replay decides alike.
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
    /// - Returns: The decision, and whether the event was a duplicate (then nothing changed).
    public mutating func decide(
        _ event: NotificationEvent, lookup: ContextLookup, defaultRateLimits: RateLimitPolicy,
        repeatedWindowMilliseconds: Int64, nowMilliseconds: Int64, sentAtMilliseconds: Int64, sourceOffset: Int64 = -1,
        userHash: UInt64? = nil
    ) -> (decision: Decision, admission: Admission) {
        var context: CompiledFocusContext?
        if case .available(let found) = lookup { context = found }
        let user = self.internUser(event.userID, hash: userHash)
        // The next change of the Focus in force is a timer of the partition, and the user's
        // status is noted when it changed: both committed with the partition, worked out again
        // only under a new context version (within one, the timer brings the changes).
        if case .available = lookup {
            self.followFocusIfChanged(user: user, context: context, nowMilliseconds: nowMilliseconds)
        }
        // With schedules, the configuration of the Focus on now decides (its people lists too).
        if let scheduled = context, scheduled.hasSchedules {
            context = scheduled.inForce(atMilliseconds: nowMilliseconds)
        }
        // The user and the sender's list are looked up once for everything below.
        let senderHash = event.senderID.map(Self.senderHash)
        var person: PersonList?
        if let senderID = event.senderID, let senderHash {
            person = context?.personList(of: senderID, hash: senderHash)
        }
        let repeated =
            context?.allowsRepeatedSenders == true
            && senderHash.map {
                self.isRepeatedSender(
                    user: user, senderHash: $0, atMilliseconds: sentAtMilliseconds,
                    windowMilliseconds: repeatedWindowMilliseconds)
            } == true
        var decision: Decision
        // Whether it counts in the badge, unread: found with the decision, by the same filter.
        var counts = true
        if case .unavailable = lookup {
            decision = FocusDecider.decide(event, lookup: lookup, nowMilliseconds: nowMilliseconds)
        } else {
            (decision, counts) = FocusDecider.decideCounting(
                appID: event.appID, criteria: event.filterCriteria, interruptionLevel: event.interruptionLevel,
                person: person, repeatedSender: repeated, context: context, nowMilliseconds: nowMilliseconds)
        }
        let limits = context?.rateLimits ?? defaultRateLimits
        // Only a delivery is counted or capped: the app's hash and the user's windows are found
        // once, for counting and then for noting the delivery.
        var appHash: UInt64 = 0
        var windows = RateWindowPlaces()
        if limits.isActive && decision.outcome == .delivered {
            if limits.perApp != nil { appHash = Self.appHash(event.appID) }
            windows = self.findRateWindows(user: user, appHash: appHash)
            if let hit = FocusDecider.rateLimitHit(
                decision, interruptionLevel: event.interruptionLevel, senderList: person, policy: limits,
                delivered: self.delivered(in: windows, policy: limits, atMilliseconds: sentAtMilliseconds))
            {
                decision.silence(by: hit)
            }
        }
        let silenced = decision.outcome == .silenced
        // What the history keeps of it: the Focus it names, else (silenced) the one on.
        let focus = self.focusNumber(
            decision.focus ?? (silenced ? context?.focusOn(atMilliseconds: nowMilliseconds) : nil))
        let admission = self.admitNotification(
            event, user: user, senderHash: senderHash, appHash: appHash, person: person, context: context,
            nowMilliseconds: nowMilliseconds, silenced: silenced, countsInBadge: counts,
            decided: (UInt8(decision.reason.index + 1), decision.contextVersion ?? .min, focus),
            sentAtMilliseconds: sentAtMilliseconds, rateLimits: limits, rateWindows: windows, sourceOffset: sourceOffset
        )
        return (decision, admission)
    }
}
