/// The user's context as the decision sees it.
public enum ContextLookup: Sendable {
    /// The context, or `nil` when the user has none.
    case available(CompiledFocusContext?)
    /// The store could not be reached and nothing is cached.
    case unavailable
}

/// The decision rules of SPEC §5, as a pure function.
public enum FocusDecider {
    /// Decides a `notification` event.
    ///
    /// - Parameters:
    ///   - appID: The event's app.
    ///   - criteria: The event's filter criteria, `nil` when it carries none.
    ///   - interruptionLevel: The event's interruption level.
    ///   - lookup: The user's context.
    ///   - nowMilliseconds: The decision time (Unix milliseconds), for expiry.
    /// - Returns: The decision with its reason.
    public static func decide(
        appID: String,
        criteria: String?,
        interruptionLevel: InterruptionLevel,
        lookup: ContextLookup,
        nowMilliseconds: Int64
    ) -> Decision {
        guard case .available(let found) = lookup else {
            return Decision(outcome: .delivered, reason: .contextUnavailable)
        }
        guard let context = found, context.isFocusOn(atMilliseconds: nowMilliseconds) else {
            return Decision(outcome: .delivered, reason: .noFocus, contextVersion: found?.version)
        }
        let (outcome, reason) = self.filter(appID: appID, criteria: criteria, context: context)
        var decision = Decision(outcome: outcome, reason: reason, focus: context.focus, contextVersion: context.version)
        if outcome == .silenced {
            if interruptionLevel == .critical {
                decision.outcome = .delivered
                decision.reason = .breakthroughCritical
            } else if interruptionLevel == .timeSensitive && context.allowTimeSensitive {
                decision.outcome = .delivered
                decision.reason = .breakthroughTimeSensitive
            }
        }
        return decision
    }

    /// Decides an event.
    public static func decide(_ event: NotificationEvent, lookup: ContextLookup, nowMilliseconds: Int64) -> Decision {
        self.decide(
            appID: event.appID, criteria: event.filterCriteria, interruptionLevel: event.interruptionLevel,
            lookup: lookup, nowMilliseconds: nowMilliseconds
        )
    }

    /// Whether an unread notification of `appID` with `criteria` counts in the badge under
    /// `context` (SPEC §7): no Focus counts everything, `hideBadges` nothing, otherwise what the
    /// Focus would deliver by its filter (interruption levels are not kept for unread notifications).
    public static func countsInBadge(
        appID: String, criteria: String?, context: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> Bool {
        guard let context, context.isFocusOn(atMilliseconds: nowMilliseconds) else { return true }
        if context.hideBadges { return false }
        return self.filter(appID: appID, criteria: criteria, context: context).0 == .delivered
    }

    /// Rules 2–4: the Focus's filter, before breakthrough.
    private static func filter(appID: String, criteria: String?, context: CompiledFocusContext) -> (
        Decision.Outcome, Decision.Reason
    ) {
        let filter = context.filter(for: appID)
        if filter.silenced {
            return (.silenced, .appSilenced)
        }
        guard let criteria else { return (.delivered, .noCriteria) }
        guard let predicate = filter.predicate else { return (.delivered, .noFilter) }
        do {
            return try predicate.evaluate(criteria) ? (.delivered, .predicateMatch) : (.silenced, .predicateMismatch)
        } catch {
            return (.delivered, .predicateError)
        }
    }
}
