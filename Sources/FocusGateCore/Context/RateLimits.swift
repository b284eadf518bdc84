// MARK: - The document form

extension FocusContext {
    /// Caps on delivered notifications (docs/contract.md, Rate limits): past a cap a notification
    /// is silenced with reason `rate-limited`, never dropped. Present in a context, it replaces the
    /// configured default (`rateLimits.*`) whole; `{}` turns limits off for the user.
    public struct RateLimits: Sendable, Hashable, Codable {
        /// Delivered notifications per user in a rolling window; `nil`: no cap.
        public var perUser: Limit?
        /// Delivered notifications per (user, app) in a rolling window; `nil`: no cap.
        public var perApp: Limit?
        /// What a cap never silences. Default: every ``Exemption``.
        public var exempt: [Exemption]

        /// Creates limits.
        public init(perUser: Limit? = nil, perApp: Limit? = nil, exempt: [Exemption] = Exemption.allCases) {
            self.perUser = perUser
            self.perApp = perApp
            self.exempt = exempt
        }

        /// At most ``max`` delivered notifications in any ``windowSeconds``.
        public struct Limit: Sendable, Hashable, Codable {
            /// 1 … ``FocusContext/maxRateLimit``.
            public var max: Int
            /// 1 … ``FocusContext/maxRateWindowSeconds``.
            public var windowSeconds: Int

            /// Creates a limit.
            public init(max: Int, windowSeconds: Int) {
                self.max = max
                self.windowSeconds = windowSeconds
            }
        }

        /// Notifications a cap never silences. They still count towards it.
        public enum Exemption: String, Sendable, Hashable, Codable, CaseIterable {
            /// Interruption level `critical`.
            case critical
            /// Interruption level `time-sensitive`.
            case timeSensitive = "time-sensitive"
            /// Senders on the context's `people.allowed` list, and repeated senders that broke through.
            case allowedSenders = "allowed-senders"
        }

        private enum CodingKeys: String, CodingKey { case perUser, perApp, exempt }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.perUser = try container.decodeIfPresent(Limit.self, forKey: .perUser)
            self.perApp = try container.decodeIfPresent(Limit.self, forKey: .perApp)
            self.exempt = try container.decodeIfPresent([Exemption].self, forKey: .exempt) ?? Exemption.allCases
        }
    }

    /// Largest `max` of a rate limit.
    public static let maxRateLimit = 10_000
    /// Longest rate-limit window: a week.
    public static let maxRateWindowSeconds = 604_800

    static func checkRateLimits(_ limits: RateLimits) throws(FocusContextError) {
        for (limit, field) in [(limits.perUser, "rateLimits.perUser"), (limits.perApp, "rateLimits.perApp")] {
            guard let limit else { continue }
            guard (1...self.maxRateLimit).contains(limit.max) else {
                throw FocusContextError(
                    code: "invalid-value", field: "\(field).max", message: "max must be 1 to \(self.maxRateLimit)")
            }
            guard (1...self.maxRateWindowSeconds).contains(limit.windowSeconds) else {
                throw FocusContextError(
                    code: "invalid-value", field: "\(field).windowSeconds",
                    message: "windowSeconds must be 1 to \(self.maxRateWindowSeconds)")
            }
        }
    }
}

// MARK: - The compiled form

/// Rate limits as the record loop reads them: windows in milliseconds, exemptions as flags.
public struct RateLimitPolicy: Sendable, Hashable {
    /// One cap: `max` deliveries per window of `windowMilliseconds`.
    public struct Cap: Sendable, Hashable {
        public var max: Int
        public var windowMilliseconds: Int64

        public init(max: Int, windowMilliseconds: Int64) {
            self.max = max
            self.windowMilliseconds = windowMilliseconds
        }
    }

    public var perUser: Cap?
    public var perApp: Cap?
    public var exemptsCritical: Bool
    public var exemptsTimeSensitive: Bool
    public var exemptsAllowedSenders: Bool

    /// No cap at all.
    public static let none = RateLimitPolicy(FocusContext.RateLimits())

    /// Compiles the document form.
    public init(_ limits: FocusContext.RateLimits) {
        func cap(_ limit: FocusContext.RateLimits.Limit?) -> Cap? {
            limit.map { Cap(max: $0.max, windowMilliseconds: Int64($0.windowSeconds) * 1000) }
        }
        self.perUser = cap(limits.perUser)
        self.perApp = cap(limits.perApp)
        self.exemptsCritical = limits.exempt.contains(.critical)
        self.exemptsTimeSensitive = limits.exempt.contains(.timeSensitive)
        self.exemptsAllowedSenders = limits.exempt.contains(.allowedSenders)
    }

    /// Whether any cap is set.
    public var isActive: Bool { self.perUser != nil || self.perApp != nil }
}

/// Deliveries counted in a user's rolling windows at one instant (``PartitionState``).
public struct RateCounts: Sendable, Hashable {
    /// In the user's window.
    public var user: Int
    /// In the (user, app)'s window.
    public var app: Int

    public init(user: Int = 0, app: Int = 0) {
        self.user = user
        self.app = app
    }
}

/// The cap that silenced a notification, as `explain` reports it.
public struct RateLimitHit: Sendable, Hashable, Codable {
    /// Which cap: the user's or the (user, app)'s.
    public enum Scope: String, Sendable, Hashable, Codable {
        case user
        case app
    }

    public var scope: Scope
    public var max: Int
    public var windowSeconds: Int
    /// Deliveries counted in the window when the notification came.
    public var delivered: Int

    public init(scope: Scope, max: Int, windowSeconds: Int, delivered: Int) {
        self.scope = scope
        self.max = max
        self.windowSeconds = windowSeconds
        self.delivered = delivered
    }
}
