/// What happens to one notification, and why (docs/contract.md, Decisions).
public struct Decision: Sendable, Hashable {
    /// Delivered or silenced ("delivered quietly").
    public var outcome: Outcome
    /// The rule that decided.
    public var reason: Reason
    /// The Focus that was on, if any.
    public var focus: String?
    /// The version of the context used, if any.
    public var contextVersion: Int64?
    /// The cap that silenced the notification, when the reason is `rate-limited`.
    public var rateLimit: RateLimitHit?

    /// Creates a decision.
    public init(outcome: Outcome, reason: Reason, focus: String? = nil, contextVersion: Int64? = nil) {
        self.outcome = outcome
        self.reason = reason
        self.focus = focus
        self.contextVersion = contextVersion
    }

    /// Delivered or silenced.
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        case delivered
        case silenced
    }

    /// Reason codes: stable, bounded, used as header values and metric labels.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        /// The reason's place in ``all``: metric slots, and comparisons that compare no text.
        public let index: Int
        public var description: String { self.rawValue }

        private init(_ rawValue: String, _ index: Int) {
            self.rawValue = rawValue
            self.index = index
        }

        public static func == (lhs: Reason, rhs: Reason) -> Bool { lhs.index == rhs.index }

        public func hash(into hasher: inout Hasher) { hasher.combine(self.index) }

        /// No context, no Focus on, or the context expired.
        public static let noFocus = Reason("no-focus", 0)
        /// The Focus silences the app.
        public static let appSilenced = Reason("app-silenced", 1)
        /// The notification carries no filter criteria.
        public static let noCriteria = Reason("no-criteria", 2)
        /// The app has no filter predicate in this Focus.
        public static let noFilter = Reason("no-filter", 3)
        /// The predicate matched the criteria.
        public static let predicateMatch = Reason("predicate-match", 4)
        /// The predicate did not match the criteria.
        public static let predicateMismatch = Reason("predicate-mismatch", 5)
        /// The predicate could not be evaluated for this criteria; delivered to be safe.
        public static let predicateError = Reason("predicate-error", 6)
        /// Silenced, but critical notifications always break through.
        public static let breakthroughCritical = Reason("breakthrough-critical", 7)
        /// Silenced, but time-sensitive notifications break through this Focus.
        public static let breakthroughTimeSensitive = Reason("breakthrough-time-sensitive", 8)
        /// The context store is down and nothing is cached; delivered to be safe.
        public static let contextUnavailable = Reason("context-unavailable", 9)
        /// The Focus silences the sender (`people.silenced`), whatever the app.
        public static let personSilenced = Reason("person-silenced", 10)
        /// The Focus silences the app, but allows the sender (`people.allowed`).
        public static let personAllowed = Reason("person-allowed", 11)
        /// Silenced, but the same sender sent another notification within the repeated-sender
        /// window and the Focus allows repeated senders (`people.allowRepeated`).
        public static let repeatedSender = Reason("repeated-sender", 12)
        /// Would have been delivered, but the user (or the user's app) had as many deliveries in
        /// the rate limit's rolling window as the limit allows.
        public static let rateLimited = Reason("rate-limited", 13)

        /// Every reason, for metric initialisation and documentation; each at its ``index``.
        public static let all: [Reason] = [
            .noFocus, .appSilenced, .noCriteria, .noFilter, .predicateMatch, .predicateMismatch,
            .predicateError, .breakthroughCritical, .breakthroughTimeSensitive, .contextUnavailable,
            .personSilenced, .personAllowed, .repeatedSender, .rateLimited,
        ]
    }
}

/// The people list of a Focus that names a sender.
public enum PersonList: String, Sendable, Hashable, Codable {
    /// `people.allowed`: gets through apps the Focus silences.
    case allowed
    /// `people.silenced`: silenced whatever the app.
    case silenced
}
