// MARK: - Deciding with the state

extension PartitionState {
    /// Decides a `notification` event with what the state knows of its user, then applies it: the
    /// record loop's one call per notification.
    ///
    /// The Focus rules (``FocusDecider/decide(_:repeatedSender:lookup:nowMilliseconds:)``) with
    /// the repeated-sender breakthrough, then rate limits (``FocusDecider/limit(_:interruptionLevel:senderList:policy:delivered:)``);
    /// both go by the record timestamp, so that a replay decides alike.
    ///
    /// - Parameters:
    ///   - event: A `notification` event.
    ///   - lookup: The user's context.
    ///   - defaultRateLimits: The configured caps, for a user whose context sets none.
    ///   - repeatedWindowMilliseconds: `people.repeatedWindowSeconds`, in milliseconds.
    ///   - nowMilliseconds: The decision time, for expiry and `decided-at`.
    ///   - sentAtMilliseconds: The record timestamp.
    /// - Returns: The decision, and whether the event was a duplicate (then nothing changed).
    public mutating func decide(
        _ event: NotificationEvent, lookup: ContextLookup, defaultRateLimits: RateLimitPolicy,
        repeatedWindowMilliseconds: Int64, nowMilliseconds: Int64, sentAtMilliseconds: Int64
    ) -> (decision: Decision, admission: Admission) {
        var context: CompiledFocusContext?
        if case .available(let found) = lookup { context = found }
        let repeated =
            event.senderID != nil && context?.allowsRepeatedSenders == true
            && self.isRepeatedSender(
                userID: event.userID, senderID: event.senderID, atMilliseconds: sentAtMilliseconds,
                windowMilliseconds: repeatedWindowMilliseconds)
        var decision = FocusDecider.decide(
            event, repeatedSender: repeated, lookup: lookup, nowMilliseconds: nowMilliseconds)
        let limits = context?.rateLimits ?? defaultRateLimits
        if limits.isActive && decision.outcome == .delivered {
            decision = FocusDecider.limit(
                decision, interruptionLevel: event.interruptionLevel,
                senderList: context?.personList(of: event.senderID),
                policy: limits,
                delivered: self.delivered(
                    userID: event.userID, appID: event.appID, policy: limits, atMilliseconds: sentAtMilliseconds))
        }
        let admission = self.admit(
            event, context: context, nowMilliseconds: nowMilliseconds, silenced: decision.outcome == .silenced,
            sentAtMilliseconds: sentAtMilliseconds, rateLimits: limits)
        return (decision, admission)
    }
}
