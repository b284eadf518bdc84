/// A decision with what it was made from, as `focusgate explain` and `POST /v1/explain` report it.
public struct DecisionExplanation: Sendable, Hashable, Codable {
    /// `delivered` or `silenced`.
    public var decision: String
    /// The reason code.
    public var reason: String
    /// The Focus that was on, if any.
    public var focus: String?
    /// The context version used, if any.
    public var contextVersion: Int64?
    /// The people list of the Focus that names the event's sender (`allowed`, `silenced`), or
    /// `nil` when no Focus is on, the event names no sender or the Focus does not list it.
    public var senderList: PersonList?
    /// The rate limit that silenced the notification (scope, cap, window and the deliveries
    /// counted in it), when the reason is `rate-limited`.
    public var rateLimit: RateLimitHit?
    /// Whether the notification, while unread, counts in the app's badge under this context.
    public var badgeCounted: Bool
    /// Which Focus is on at the instant explained, why, and when that may change.
    public var focusState: FocusStateReport
    /// How badge changes are published: coalesced to the latest value per (user, app) at each
    /// commit (`commit.intervalMs`).
    public var badgeUpdates = "coalesced-per-commit"

    /// ``FocusState`` as explain reports it: instants in RFC 3339.
    public struct FocusStateReport: Sendable, Hashable, Codable {
        /// The Focus on, or `nil`.
        public var focus: String?
        /// `manual`, `schedule`, `expiry` (the manual Focus expired) or `none`.
        public var cause: String
        /// When this state began, when the context says.
        public var since: String?
        /// The next instant the Focus in force may change: a schedule boundary, the end of a
        /// manual override, the expiry; `nil`: never.
        public var nextTransition: String?

        /// The report of `state`.
        public init(_ state: FocusState) {
            self.focus = state.focus
            self.cause = state.cause.rawValue
            self.since = state.since.map(Timestamp.rfc3339(milliseconds:))
            self.nextTransition = state.until.map(Timestamp.rfc3339(milliseconds:))
        }

        private enum CodingKeys: String, CodingKey { case focus, cause, since, nextTransition }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.focus, forKey: .focus)
            try container.encode(self.cause, forKey: .cause)
            try container.encode(self.since, forKey: .since)
            try container.encode(self.nextTransition, forKey: .nextTransition)
        }
    }

    /// What the gateway's state would know of the user at decision time; explain keeps no state,
    /// so the caller says it (`recent` in `POST /v1/explain`, flags of `focusgate explain`).
    public struct RecentActivity: Sendable, Hashable, Codable {
        /// The event's sender sent the user another notification within the repeated-sender window.
        public var repeatedSender: Bool
        /// Deliveries counted in the user's rate-limit window.
        public var deliveredToUser: Int
        /// Deliveries counted in the (user, app)'s rate-limit window.
        public var deliveredFromApp: Int

        public init(repeatedSender: Bool = false, deliveredToUser: Int = 0, deliveredFromApp: Int = 0) {
            self.repeatedSender = repeatedSender
            self.deliveredToUser = deliveredToUser
            self.deliveredFromApp = deliveredFromApp
        }

        private enum CodingKeys: String, CodingKey { case repeatedSender, deliveredToUser, deliveredFromApp }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.repeatedSender = try container.decodeIfPresent(Bool.self, forKey: .repeatedSender) ?? false
            self.deliveredToUser = try container.decodeIfPresent(Int.self, forKey: .deliveredToUser) ?? 0
            self.deliveredFromApp = try container.decodeIfPresent(Int.self, forKey: .deliveredFromApp) ?? 0
        }
    }

    /// Explains the decision for `event` under `context` at `nowMilliseconds`, with the same
    /// rules as the gateway's record loop: Focus, people, repeated senders, rate limits.
    ///
    /// - Parameters:
    ///   - recent: What the gateway's state would know (repeated sender, deliveries in the windows).
    ///   - defaultRateLimits: The configured limits, for a context that sets none.
    /// - Throws: ``FocusContextError`` when the context's predicates do not compile.
    public init(
        event: NotificationEvent, context: FocusContext?, nowMilliseconds: Int64,
        recent: RecentActivity = RecentActivity(), defaultRateLimits: RateLimitPolicy = .none
    ) throws(FocusContextError) {
        var compiler = FocusContextCompiler()
        let compiled = try context.map { (context) throws(FocusContextError) in try compiler.compile(context) }
        let ruling = FocusDecider.decide(
            event, lookup: .available(compiled), nowMilliseconds: nowMilliseconds, rateLimits: defaultRateLimits,
            repeatedSender: { recent.repeatedSender },
            delivered: { _ in RateCounts(user: recent.deliveredToUser, app: recent.deliveredFromApp) })
        let decision = ruling.decision
        self.rateLimit = decision.rateLimit
        self.decision = decision.outcome.rawValue
        self.reason = decision.reason.rawValue
        self.focus = decision.focus
        self.contextVersion = decision.contextVersion
        self.senderList = ruling.context?.isFocusOn(atMilliseconds: nowMilliseconds) == true ? ruling.senderList : nil
        self.badgeCounted = ruling.countsInBadge
        self.focusState = FocusStateReport(
            compiled?.focusState(at: nowMilliseconds) ?? FocusState(focus: nil, cause: .none))
    }

    private enum CodingKeys: String, CodingKey {
        case decision, reason, focus, contextVersion, senderList, rateLimit, badgeCounted, badgeUpdates, focusState
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.decision, forKey: .decision)
        try container.encode(self.reason, forKey: .reason)
        try container.encode(self.focus, forKey: .focus)
        try container.encode(self.contextVersion, forKey: .contextVersion)
        try container.encode(self.senderList, forKey: .senderList)
        try container.encode(self.rateLimit, forKey: .rateLimit)
        try container.encode(self.badgeCounted, forKey: .badgeCounted)
        try container.encode(self.badgeUpdates, forKey: .badgeUpdates)
        try container.encode(self.focusState, forKey: .focusState)
    }
}
