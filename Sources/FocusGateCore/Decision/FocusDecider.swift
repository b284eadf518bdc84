/// The user's context as the decision sees it.
public enum ContextLookup: Sendable {
    /// The context, or `nil` when the user has none.
    case available(CompiledFocusContext?)
    /// The store could not be reached and nothing is cached.
    case unavailable
}

/// The decision rules of docs/contract.md, Decisions and Rate limits, as pure functions: one for
/// a notification's decision, which the record loop (``PartitionState``), `explain`
/// (``DecisionExplanation``) and the tests all call, and one for whether an unread notification
/// counts in its app's badge.
public enum FocusDecider {
    /// `people.repeatedWindowSeconds` unless configured: how close a sender's two notifications
    /// are for the second to break through as a repeated sender.
    public static let defaultRepeatedSenderWindowSeconds: Int64 = 180

    /// A notification's decision, with what was found on the way that the caller's state keeps.
    public struct Ruling: Sendable {
        /// The decision with its reason.
        public var decision: Decision
        /// Whether the notification, while unread, counts in its app's badge under the context in
        /// force (``countsInBadge(appID:criteria:senderID:context:nowMilliseconds:)``).
        public var countsInBadge: Bool
        /// The context in force at the decision time (a schedule's configuration, or the manual
        /// one); `nil` when the user has none or it is unavailable.
        public var context: CompiledFocusContext?
        /// The list of the context in force that names the event's sender, if any.
        public var senderList: PersonList?
        /// The rate limits in force: the context's, else the configured default.
        public var rateLimits: RateLimitPolicy
    }

    /// Decides a `notification` event: the Focus in force at `nowMilliseconds`, its people
    /// lists, the app's filter and predicate, the breakthroughs (critical, time-sensitive,
    /// repeated senders), then the rate limits in force.
    ///
    /// - Parameters:
    ///   - event: A `notification` event.
    ///   - lookup: The user's context.
    ///   - nowMilliseconds: The decision time (Unix milliseconds), for expiry and schedules.
    ///   - rateLimits: The configured caps, for a user whose context sets none. Default: none.
    ///   - senderHash: The sender id's ``StableHash/sender(_:)`` when the caller has it.
    ///   - repeatedSender: Whether the same sender sent the user another notification within the
    ///     repeated-sender window; asked only when the context in force lets repeated senders
    ///     through (the partition state knows, from record timestamps).
    ///   - delivered: The deliveries counted in the windows of the caps given; asked only for a
    ///     delivery while caps are set.
    /// - Returns: The decision, and what was found on the way.
    public static func decide(
        _ event: NotificationEvent, lookup: ContextLookup, nowMilliseconds: Int64,
        rateLimits defaultRateLimits: RateLimitPolicy = .none, senderHash: UInt64? = nil,
        repeatedSender: () -> Bool = { false }, delivered: (RateLimitPolicy) -> RateCounts = { _ in RateCounts() }
    ) -> Ruling {
        var context: CompiledFocusContext?
        var person: PersonList?
        var decision: Decision
        var counts = true
        if case .available(let found) = lookup {
            // With schedules, the configuration of the Focus on now decides (its people lists too).
            context = found
            if let scheduled = found, scheduled.hasSchedules {
                context = scheduled.inForce(atMilliseconds: nowMilliseconds)
            }
            if let senderID = event.senderID, let context {
                person =
                    senderHash.map { context.personList(of: senderID, hash: $0) } ?? context.personList(of: senderID)
            }
            let repeated = context?.allowsRepeatedSenders == true && repeatedSender()
            (decision, counts) = self.decideCounting(
                appID: event.appID, criteria: event.filterCriteria, interruptionLevel: event.interruptionLevel,
                person: person, repeatedSender: repeated, context: context, nowMilliseconds: nowMilliseconds)
        } else {
            decision = Decision(outcome: .delivered, reason: .contextUnavailable)
        }
        let limits = context?.rateLimits ?? defaultRateLimits
        if limits.isActive && decision.outcome == .delivered,
            let hit = self.rateLimitHit(
                decision, interruptionLevel: event.interruptionLevel, senderList: person, policy: limits,
                delivered: delivered(limits))
        {
            decision.silence(by: hit)
        }
        return Ruling(
            decision: decision, countsInBadge: counts, context: context, senderList: person, rateLimits: limits)
    }

    /// The Focus rules of ``decide(_:lookup:nowMilliseconds:rateLimits:senderHash:repeatedSender:delivered:)``
    /// under the context in force, and whether the notification, unread, counts in the badge
    /// under it: both come from one pass through the people lists, the app's filter and its
    /// predicate.
    private static func decideCounting(
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
