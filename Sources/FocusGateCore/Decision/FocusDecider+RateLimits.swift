// MARK: - Rate limits

extension FocusDecider {
    /// Applies rate limits to a decision (docs/contract.md, Rate limits): a delivered notification
    /// that is not exempt is silenced with reason `rate-limited` when the user's window already
    /// holds `perUser.max` deliveries, or the (user, app)'s holds `perApp.max`. Never drops.
    ///
    /// - Parameters:
    ///   - decision: The decision of the Focus rules.
    ///   - interruptionLevel: The event's interruption level.
    ///   - senderList: The context's list that names the event's sender, if any.
    ///   - policy: The limits in force (the context's, else the configured default).
    ///   - delivered: Deliveries counted in the windows at the record's timestamp.
    /// - Returns: The decision, or a `rate-limited` silence naming the cap.
    public static func limit(
        _ decision: Decision, interruptionLevel: InterruptionLevel, senderList: PersonList?,
        policy: RateLimitPolicy, delivered: RateCounts
    ) -> Decision {
        guard
            let hit = self.rateLimitHit(
                decision, interruptionLevel: interruptionLevel, senderList: senderList, policy: policy,
                delivered: delivered)
        else { return decision }
        var limited = decision
        limited.silence(by: hit)
        return limited
    }

    /// The cap that silences a delivery, or `nil` when the decision stands: what
    /// ``limit(_:interruptionLevel:senderList:policy:delivered:)`` applies, for a caller that
    /// changes its decision in place (``Decision/silence(by:)``) rather than copying it.
    public static func rateLimitHit(
        _ decision: Decision, interruptionLevel: InterruptionLevel, senderList: PersonList?,
        policy: RateLimitPolicy, delivered: RateCounts
    ) -> RateLimitHit? {
        guard decision.outcome == .delivered, !self.isExempt(decision, interruptionLevel, senderList, policy) else {
            return nil
        }
        if let cap = policy.perUser, delivered.user >= cap.max {
            return RateLimitHit(
                scope: .user, max: cap.max, windowSeconds: Int(cap.windowMilliseconds / 1000),
                delivered: delivered.user)
        }
        if let cap = policy.perApp, delivered.app >= cap.max {
            return RateLimitHit(
                scope: .app, max: cap.max, windowSeconds: Int(cap.windowMilliseconds / 1000), delivered: delivered.app)
        }
        return nil
    }

    /// Whether a cap may silence this delivery: critical and time-sensitive notifications and
    /// allowed (or repeated) senders when the policy exempts them.
    public static func isExempt(
        _ decision: Decision, _ interruptionLevel: InterruptionLevel, _ senderList: PersonList?,
        _ policy: RateLimitPolicy
    ) -> Bool {
        (policy.exemptsCritical && interruptionLevel == .critical)
            || (policy.exemptsTimeSensitive && interruptionLevel == .timeSensitive)
            || (policy.exemptsAllowedSenders && (senderList == .allowed || decision.reason == .repeatedSender))
    }
}
