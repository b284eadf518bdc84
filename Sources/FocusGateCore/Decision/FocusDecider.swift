/// The user's context as the decision sees it.
public enum ContextLookup: Sendable {
    /// The context, or `nil` when the user has none.
    case available(CompiledFocusContext?)
    /// The store could not be reached and nothing is cached.
    case unavailable
}

/// The decision rules of docs/contract.md, Decisions, as a pure function.
public enum FocusDecider {
    /// Decides a `notification` event.
    ///
    /// - Parameters:
    ///   - appID: The event's app.
    ///   - criteria: The event's filter criteria, `nil` when it carries none.
    ///   - interruptionLevel: The event's interruption level.
    ///   - senderID: The event's sender, `nil` when it names none.
    ///   - repeatedSender: Whether the same sender sent the user another notification within the
    ///     repeated-sender window (the partition state knows, from record timestamps).
    ///   - lookup: The user's context.
    ///   - nowMilliseconds: The decision time (Unix milliseconds), for expiry and schedules.
    /// - Returns: The decision with its reason.
    public static func decide(
        appID: String,
        criteria: String?,
        interruptionLevel: InterruptionLevel,
        senderID: String? = nil,
        repeatedSender: Bool = false,
        lookup: ContextLookup,
        nowMilliseconds: Int64
    ) -> Decision {
        guard case .available(var found) = lookup else {
            return Decision(outcome: .delivered, reason: .contextUnavailable)
        }
        if let scheduled = found, scheduled.hasSchedules { found = scheduled.inForce(atMilliseconds: nowMilliseconds) }
        return self.decide(
            appID: appID, criteria: criteria, interruptionLevel: interruptionLevel,
            person: found?.personList(of: senderID), repeatedSender: repeatedSender, context: found,
            nowMilliseconds: nowMilliseconds)
    }

    /// Decides with the sender's people list already looked up (`person`), for a caller that
    /// needs the list again: one lookup per notification.
    static func decide(
        appID: String, criteria: String?, interruptionLevel: InterruptionLevel, person: PersonList?,
        repeatedSender: Bool, context found: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> Decision {
        self.decideCounting(
            appID: appID, criteria: criteria, interruptionLevel: interruptionLevel, person: person,
            repeatedSender: repeatedSender, context: found, nowMilliseconds: nowMilliseconds
        ).decision
    }

    /// ``decide(appID:criteria:interruptionLevel:person:repeatedSender:context:nowMilliseconds:)``
    /// and whether the notification, unread, counts in the badge under the same context
    /// (``countsInBadge(appID:criteria:person:context:nowMilliseconds:)``): both come from one
    /// pass through the people lists, the app's filter and its predicate.
    static func decideCounting(
        appID: String, criteria: String?, interruptionLevel: InterruptionLevel, person: PersonList?,
        repeatedSender: Bool, context found: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> (decision: Decision, countsInBadge: Bool) {
        guard let context = found, context.isFocusOn(atMilliseconds: nowMilliseconds) else {
            return (Decision(outcome: .delivered, reason: .noFocus, contextVersion: found?.version), true)
        }
        let (outcome, reason) = self.filter(appID: appID, criteria: criteria, person: person, context: context)
        let counts = !context.hideBadges && outcome == .delivered
        var decision = Decision(outcome: outcome, reason: reason, focus: context.focus, contextVersion: context.version)
        if outcome == .silenced {
            if interruptionLevel == .critical {
                decision.outcome = .delivered
                decision.reason = .breakthroughCritical
            } else if interruptionLevel == .timeSensitive && context.allowTimeSensitive && reason != .personSilenced {
                // A person the user silenced stays silenced: only critical alerts get through.
                decision.outcome = .delivered
                decision.reason = .breakthroughTimeSensitive
            } else if repeatedSender && context.allowsRepeatedSenders && reason != .personSilenced {
                // Apple's "Allow Repeated Calls": the second within the window gets through.
                decision.outcome = .delivered
                decision.reason = .repeatedSender
            }
        }
        return (decision, counts)
    }

    /// Decides an event.
    public static func decide(
        _ event: NotificationEvent, repeatedSender: Bool = false, lookup: ContextLookup, nowMilliseconds: Int64
    ) -> Decision {
        self.decide(
            appID: event.appID, criteria: event.filterCriteria, interruptionLevel: event.interruptionLevel,
            senderID: event.senderID, repeatedSender: repeatedSender, lookup: lookup, nowMilliseconds: nowMilliseconds
        )
    }

    /// Whether an unread notification of `appID` with `criteria` from `senderID` counts in the
    /// badge under `context` (docs/contract.md, Badges): no Focus counts everything, `hideBadges`
    /// nothing, otherwise what the Focus would deliver by its people lists and filter (interruption
    /// levels are not kept for unread notifications).
    public static func countsInBadge(
        appID: String, criteria: String?, senderID: String? = nil, context: CompiledFocusContext?,
        nowMilliseconds: Int64
    ) -> Bool {
        let context = context?.inForce(atMilliseconds: nowMilliseconds)
        return self.countsInBadge(
            appID: appID, criteria: criteria, person: context?.personList(of: senderID), context: context,
            nowMilliseconds: nowMilliseconds)
    }

    /// ``countsInBadge(appID:criteria:senderID:context:nowMilliseconds:)`` with the sender's
    /// people list already looked up.
    static func countsInBadge(
        appID: String, criteria: String?, person: PersonList?, context: CompiledFocusContext?, nowMilliseconds: Int64
    ) -> Bool {
        guard let context, context.isFocusOn(atMilliseconds: nowMilliseconds) else { return true }
        if context.hideBadges { return false }
        return self.filter(appID: appID, criteria: criteria, person: person, context: context).0 == .delivered
    }

    /// The Focus's people lists and filter, before breakthrough: a silenced person is silenced
    /// whatever the app; an allowed person gets through an app the Focus silences, but the app's
    /// predicate still applies; otherwise the app's silencing, then its predicate.
    private static func filter(
        appID: String, criteria: String?, person: PersonList?, context: CompiledFocusContext
    ) -> (Decision.Outcome, Decision.Reason) {
        if person == .silenced {
            return (.silenced, .personSilenced)
        }
        let filter = context.filter(for: appID)
        if filter.silenced && person != .allowed {
            return (.silenced, .appSilenced)
        }
        let byPredicate: (Decision.Outcome, Decision.Reason)
        if let criteria, let predicate = filter.predicate {
            do {
                byPredicate =
                    try predicate.evaluate(criteria) ? (.delivered, .predicateMatch) : (.silenced, .predicateMismatch)
            } catch {
                byPredicate = (.delivered, .predicateError)
            }
        } else {
            byPredicate = (.delivered, criteria == nil ? .noCriteria : .noFilter)
        }
        // The allowed person is what let it through the silenced app.
        if filter.silenced && byPredicate.0 == .delivered {
            return (.delivered, .personAllowed)
        }
        return byPredicate
    }
}
