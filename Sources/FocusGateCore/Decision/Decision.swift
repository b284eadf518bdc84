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
    ///
    /// A reason is its ``index`` alone, so a ``Decision`` copies without reference counting.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        /// The reason's place in ``all``: metric slots, and comparisons that compare no text.
        public let index: Int
        public var description: String { self.rawValue }

        private init(_ index: Int) {
            self.index = index
        }

        /// The code, as headers and metric labels carry it.
        public var rawValue: String {
            switch self.index {
            case 0: "no-focus"
            case 1: "app-silenced"
            case 2: "no-criteria"
            case 3: "no-filter"
            case 4: "predicate-match"
            case 5: "predicate-mismatch"
            case 6: "predicate-error"
            case 7: "breakthrough-critical"
            case 8: "breakthrough-time-sensitive"
            case 9: "context-unavailable"
            case 10: "person-silenced"
            case 11: "person-allowed"
            case 12: "repeated-sender"
            case 13: "rate-limited"
            default: preconditionFailure("a reason outside Reason.all")
            }
        }

        /// No context, no Focus on, or the context expired.
        public static let noFocus = Reason(0)
        /// The Focus silences the app.
        public static let appSilenced = Reason(1)
        /// The notification carries no filter criteria.
        public static let noCriteria = Reason(2)
        /// The app has no filter predicate in this Focus.
        public static let noFilter = Reason(3)
        /// The predicate matched the criteria.
        public static let predicateMatch = Reason(4)
        /// The predicate did not match the criteria.
        public static let predicateMismatch = Reason(5)
        /// The predicate could not be evaluated for this criteria; delivered to be safe.
        public static let predicateError = Reason(6)
        /// Silenced, but critical notifications always break through.
        public static let breakthroughCritical = Reason(7)
        /// Silenced, but time-sensitive notifications break through this Focus.
        public static let breakthroughTimeSensitive = Reason(8)
        /// The context store is down and nothing is cached; delivered to be safe.
        public static let contextUnavailable = Reason(9)
        /// The Focus silences the sender (`people.silenced`), whatever the app.
        public static let personSilenced = Reason(10)
        /// The Focus silences the app, but allows the sender (`people.allowed`).
        public static let personAllowed = Reason(11)
        /// Silenced, but the same sender sent another notification within the repeated-sender
        /// window and the Focus allows repeated senders (`people.allowRepeated`).
        public static let repeatedSender = Reason(12)
        /// Would have been delivered, but the user (or the user's app) had as many deliveries in
        /// the rate limit's rolling window as the limit allows.
        public static let rateLimited = Reason(13)

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

extension Decision {
    /// Turns a delivery into a `rate-limited` silence naming the cap `hit`.
    public mutating func silence(by hit: RateLimitHit) {
        self.outcome = .silenced
        self.reason = .rateLimited
        self.rateLimit = hit
    }
}
