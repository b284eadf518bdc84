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
        public var description: String { self.rawValue }

        /// No context, no Focus on, or the context expired.
        public static let noFocus = Reason(rawValue: "no-focus")
        /// The Focus silences the app.
        public static let appSilenced = Reason(rawValue: "app-silenced")
        /// The notification carries no filter criteria.
        public static let noCriteria = Reason(rawValue: "no-criteria")
        /// The app has no filter predicate in this Focus.
        public static let noFilter = Reason(rawValue: "no-filter")
        /// The predicate matched the criteria.
        public static let predicateMatch = Reason(rawValue: "predicate-match")
        /// The predicate did not match the criteria.
        public static let predicateMismatch = Reason(rawValue: "predicate-mismatch")
        /// The predicate could not be evaluated for this criteria; delivered to be safe.
        public static let predicateError = Reason(rawValue: "predicate-error")
        /// Silenced, but critical notifications always break through.
        public static let breakthroughCritical = Reason(rawValue: "breakthrough-critical")
        /// Silenced, but time-sensitive notifications break through this Focus.
        public static let breakthroughTimeSensitive = Reason(rawValue: "breakthrough-time-sensitive")
        /// The context store is down and nothing is cached; delivered to be safe.
        public static let contextUnavailable = Reason(rawValue: "context-unavailable")
        /// The Focus silences the sender (`people.silenced`), whatever the app.
        public static let personSilenced = Reason(rawValue: "person-silenced")
        /// The Focus silences the app, but allows the sender (`people.allowed`).
        public static let personAllowed = Reason(rawValue: "person-allowed")
        /// Silenced, but the same sender sent another notification within the repeated-sender
        /// window and the Focus allows repeated senders (`people.allowRepeated`).
        public static let repeatedSender = Reason(rawValue: "repeated-sender")
        /// Would have been delivered, but the user (or the user's app) had as many deliveries in
        /// the rate limit's rolling window as the limit allows.
        public static let rateLimited = Reason(rawValue: "rate-limited")

        /// Every reason, for metric initialisation and documentation.
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
