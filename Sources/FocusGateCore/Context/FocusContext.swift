public import Foundation

/// A user's Focus app contexts (docs/contract.md, Focus contexts): which Focus is on, until when, and each app's filter.
///
/// This is the document the store keeps and the API exchanges. ``validate()`` checks it when it
/// is written; ``CompiledFocusContext`` is the form decisions read.
public struct FocusContext: Sendable, Hashable, Codable {
    /// The user (`userId`).
    public var userID: String
    /// Strictly increases per user; an older or equal version is never applied over a newer one.
    public var version: Int64
    /// The Focus that is on (`Work`, `Sleep`, …); `nil` when no Focus is on.
    public var focus: String?
    /// After this instant the context counts as Focus off.
    public var expiresAt: Date?
    /// Time-sensitive notifications break through a silencing Focus. Default: `true`.
    public var allowTimeSensitive: Bool
    /// Badges count nothing during this Focus. Default: `false`.
    public var hideBadges: Bool
    /// What the Focus does to apps not listed in ``apps``. Default: `.deliver`.
    public var otherApps: OtherApps
    /// Per app (bundle id): its filter predicate, whether the Focus silences it, and its parameters.
    public var apps: [String: AppFilter]
    /// The people the Focus allows or silences, by the `senderId` of their notifications; `nil`:
    /// the Focus names nobody.
    public var people: People?
    /// Caps on delivered notifications; `nil`: the configured default (`rateLimits.*`).
    public var rateLimits: RateLimits?
    /// The user's IANA time zone (`Europe/Paris`), which ``schedules`` are in.
    public var timeZone: String?
    /// When ``focus`` was set by hand: with ``schedules``, it holds from then until the next
    /// schedule boundary. Required when both a manual Focus and schedules are given.
    public var focusSetAt: Date?
    /// What each named Focus allows, for ``schedules``; the top-level fields are the manual
    /// ``focus``'s when it has no entry here.
    public var foci: [String: FocusConfiguration]
    /// When Foci in ``foci`` turn themselves on and off.
    public var schedules: [Schedule]
    /// Whether `focus.status` tells senders the user is focused while the manual ``focus`` is
    /// on. Default: `true`.
    public var sharesStatus: Bool
    /// Summaries of what the user's Foci silenced, on `notifications.summaries`; `nil`: none are
    /// made, and nothing is kept for them. Default: `nil`.
    public var summaries: Summaries?

    /// Creates a context.
    public init(
        userID: String,
        version: Int64,
        focus: String? = nil,
        expiresAt: Date? = nil,
        allowTimeSensitive: Bool = true,
        hideBadges: Bool = false,
        otherApps: OtherApps = .deliver,
        apps: [String: AppFilter] = [:],
        people: People? = nil,
        rateLimits: RateLimits? = nil,
        timeZone: String? = nil,
        focusSetAt: Date? = nil,
        foci: [String: FocusConfiguration] = [:],
        schedules: [Schedule] = [],
        sharesStatus: Bool = true,
        summaries: Summaries? = nil
    ) {
        self.userID = userID
        self.version = version
        self.focus = focus
        self.expiresAt = expiresAt
        self.allowTimeSensitive = allowTimeSensitive
        self.hideBadges = hideBadges
        self.otherApps = otherApps
        self.apps = apps
        self.people = people
        self.rateLimits = rateLimits
        self.timeZone = timeZone
        self.focusSetAt = focusSetAt
        self.foci = foci
        self.schedules = schedules
        self.sharesStatus = sharesStatus
        self.summaries = summaries
    }

    /// When the user wants what a Focus silenced summed up (docs/focus-schedules.md, Summaries).
    public struct Summaries: Sendable, Hashable, Codable {
        /// At the end of each Focus period. Default: `true`.
        public var atFocusEnd: Bool
        /// Local times of day, in the context's ``FocusContext/timeZone``. Default: none.
        public var times: [LocalTime]

        /// Creates the settings.
        public init(atFocusEnd: Bool = true, times: [LocalTime] = []) {
            self.atFocusEnd = atFocusEnd
            self.times = times
        }

        private enum CodingKeys: String, CodingKey { case atFocusEnd, times }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.atFocusEnd = try container.decodeIfPresent(Bool.self, forKey: .atFocusEnd) ?? true
            self.times = try container.decodeIfPresent([LocalTime].self, forKey: .times) ?? []
        }
    }

    /// What a Focus does to an app it does not list.
    public enum OtherApps: String, Sendable, Hashable, Codable {
        case deliver
        case silence
    }

    /// One app's Focus filter.
    public struct AppFilter: Sendable, Hashable, Codable {
        /// The app's `notificationFilterPredicate`; `nil`: no filtering.
        public var filterPredicate: String?
        /// The Focus silences the app. Default: `false`.
        public var silenced: Bool
        /// The app's Focus filter parameters, stored and echoed, never interpreted.
        public var parameters: JSONValue?

        /// Creates an app filter.
        public init(filterPredicate: String? = nil, silenced: Bool = false, parameters: JSONValue? = nil) {
            self.filterPredicate = filterPredicate
            self.silenced = silenced
            self.parameters = parameters
        }

        private enum CodingKeys: String, CodingKey { case filterPredicate, silenced, parameters }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.filterPredicate = try container.decodeIfPresent(String.self, forKey: .filterPredicate)
            self.silenced = try container.decodeIfPresent(Bool.self, forKey: .silenced) ?? false
            self.parameters = try container.decodeIfPresent(JSONValue.self, forKey: .parameters)
        }
    }

    /// The people a Focus names, as Apple's Focus settings do ("Allow notifications from" and
    /// "Silence notifications from"): a silenced person is silenced even in an allowed app, an
    /// allowed person gets through an app the Focus silences.
    public struct People: Sendable, Hashable, Codable {
        /// Sender ids whose notifications get through apps the Focus silences. Default: none.
        public var allowed: [String]
        /// Sender ids whose notifications are silenced whatever the app. Default: none.
        public var silenced: [String]
        /// Apple's "Allow Repeated Calls": a second notification from the same sender within the
        /// repeated-sender window (`people.repeatedWindowSeconds`, 180 s) gets through. Default: `false`.
        public var allowRepeated: Bool

        /// Creates the lists.
        public init(allowed: [String] = [], silenced: [String] = [], allowRepeated: Bool = false) {
            self.allowed = allowed
            self.silenced = silenced
            self.allowRepeated = allowRepeated
        }

        private enum CodingKeys: String, CodingKey { case allowed, silenced, allowRepeated }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.allowed = try container.decodeIfPresent([String].self, forKey: .allowed) ?? []
            self.silenced = try container.decodeIfPresent([String].self, forKey: .silenced) ?? []
            self.allowRepeated = try container.decodeIfPresent(Bool.self, forKey: .allowRepeated) ?? false
        }
    }

    private enum CodingKeys: String, CodingKey {
        case userID = "userId", version, focus, expiresAt, allowTimeSensitive, hideBadges, otherApps, apps, people,
            rateLimits, timeZone, focusSetAt, foci, schedules, sharesStatus, summaries
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.userID = try container.decode(String.self, forKey: .userID)
        self.version = try container.decode(Int64.self, forKey: .version)
        self.focus = try container.decodeIfPresent(String.self, forKey: .focus)
        self.expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)
        self.allowTimeSensitive = try container.decodeIfPresent(Bool.self, forKey: .allowTimeSensitive) ?? true
        self.hideBadges = try container.decodeIfPresent(Bool.self, forKey: .hideBadges) ?? false
        self.otherApps = try container.decodeIfPresent(OtherApps.self, forKey: .otherApps) ?? .deliver
        self.apps = try container.decodeIfPresent([String: AppFilter].self, forKey: .apps) ?? [:]
        self.people = try container.decodeIfPresent(People.self, forKey: .people)
        self.rateLimits = try container.decodeIfPresent(RateLimits.self, forKey: .rateLimits)
        self.timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
        self.focusSetAt = try container.decodeIfPresent(Date.self, forKey: .focusSetAt)
        self.foci = try container.decodeIfPresent([String: FocusConfiguration].self, forKey: .foci) ?? [:]
        self.schedules = try container.decodeIfPresent([Schedule].self, forKey: .schedules) ?? []
        self.sharesStatus = try container.decodeIfPresent(Bool.self, forKey: .sharesStatus) ?? true
        self.summaries = try container.decodeIfPresent(Summaries.self, forKey: .summaries)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.userID, forKey: .userID)
        try container.encode(self.version, forKey: .version)
        try container.encode(self.focus, forKey: .focus)  // explicit null: "no Focus"
        try container.encodeIfPresent(self.expiresAt, forKey: .expiresAt)
        try container.encode(self.allowTimeSensitive, forKey: .allowTimeSensitive)
        try container.encode(self.hideBadges, forKey: .hideBadges)
        try container.encode(self.otherApps, forKey: .otherApps)
        try container.encode(self.apps, forKey: .apps)
        // Only when set: a document without people encodes as it always did.
        try container.encodeIfPresent(self.people, forKey: .people)
        try container.encodeIfPresent(self.rateLimits, forKey: .rateLimits)
        try container.encodeIfPresent(self.timeZone, forKey: .timeZone)
        try container.encodeIfPresent(self.focusSetAt, forKey: .focusSetAt)
        if !self.foci.isEmpty { try container.encode(self.foci, forKey: .foci) }
        if !self.schedules.isEmpty { try container.encode(self.schedules, forKey: .schedules) }
        if !self.sharesStatus { try container.encode(false, forKey: .sharesStatus) }
        try container.encodeIfPresent(self.summaries, forKey: .summaries)
    }
}
