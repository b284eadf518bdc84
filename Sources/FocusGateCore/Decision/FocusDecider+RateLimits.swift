// MARK: - Rate limits

extension FocusDecider {
    /// The cap that silences a delivery (docs/contract.md, Rate limits), or `nil` when the
    /// decision stands: a delivered notification that is not exempt is silenced with reason
    /// `rate-limited` (``Decision/silence(by:)``) when the user's window already holds
    /// `perUser.max` deliveries, or the (user, app)'s holds `perApp.max`. Never drops.
    ///
    /// - Parameters:
    ///   - decision: The decision of the Focus rules.
    ///   - interruptionLevel: The event's interruption level.
    ///   - senderList: The context's list that names the event's sender, if any.
    ///   - policy: The limits in force (the context's, else the configured default).
    ///   - delivered: Deliveries counted in the windows at the record's timestamp.
    static func rateLimitHit(
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
    static func isExempt(
        _ decision: Decision, _ interruptionLevel: InterruptionLevel, _ senderList: PersonList?,
        _ policy: RateLimitPolicy
    ) -> Bool {
        (policy.exemptsCritical && interruptionLevel == .critical)
            || (policy.exemptsTimeSensitive && interruptionLevel == .timeSensitive)
            || (policy.exemptsAllowedSenders && (senderList == .allowed || decision.reason == .repeatedSender))
    }
}
