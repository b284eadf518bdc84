import FocusGateCore

// The admin API's answer bodies (docs/openapi.yaml, components and responses), encoded with
// sorted keys by `AdminAPI.json(_:status:)`.

/// `GET /healthz`.
struct Health: Encodable {
    var status = "ok"
    var version = FocusGateRelease.version
    var librdkafka = FocusGateRelease.librdkafkaVersion
}

/// `GET /readyz`: ready, each named check, and the dependencies that do not decide readiness.
struct ReadinessAnswer: Encodable {
    var ready: Bool
    var checks: [String: Bool]
    var dependencies: [String: Bool]
}

/// `PUT /v1/users/{userId}/context`: the stored document and its predicates' warnings.
struct StoredContext: Encodable {
    struct Warning: Encodable {
        var field: String
        var code: String
        var position: Int
        var message: String
    }

    var context: FocusContext
    var warnings: [Warning]
}

/// `GET /v1/users/{userId}/badges`.
struct UserBadges: Encodable {
    struct Item: Codable {
        var appId: String
        var badge: Int
        var unread: Int
        var sequence: UInt64

        init(_ badge: Badge) {
            self.appId = badge.appID
            self.badge = badge.badge
            self.unread = badge.unread
            self.sequence = badge.sequence
        }
    }

    var userId: String
    var badges: [Item]
}

/// `GET /v1/instance/users/{userId}/badges`: what this instance alone knows, for its peers.
struct InstanceBadges: Codable {
    var userId: String
    /// Whether a worker of this instance holds the user (then `badges` are theirs).
    var held: Bool
    var badges: [UserBadges.Item]
    /// The input partitions whose state this instance's workers hold, restored.
    var partitions: [Int32]
    /// The input topic's partition count (`0`: not yet known).
    var partitionCount: Int
}

/// Every error answer: a stable code and a message, with the details some codes carry.
struct ErrorAnswer: Encodable {
    var error: String
    var message: String
    /// The offending field (`invalid-predicate`, decoding errors).
    var field: String?
    /// The predicate error's position and reason (`invalid-predicate`).
    var position: Int?
    var reason: String?
    /// The stored version (`stale-version`).
    var currentVersion: Int64?
}

/// `GET /v1/users/{userId}/status`: whether the user is focused now, by the stored context;
/// never the Focus's name.
struct UserStatus: Encodable {
    var userId: String
    var focused: Bool
    var until: String?
    var contextVersion: Int64?

    private enum CodingKeys: String, CodingKey { case userId, focused, until, contextVersion }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.userId, forKey: .userId)
        try container.encode(self.focused, forKey: .focused)
        try container.encode(self.until, forKey: .until)
        try container.encode(self.contextVersion, forKey: .contextVersion)
    }
}

/// One remembered notification and how it was decided (`GET /v1/users/{userId}/notifications`
/// and `…/notifications/{notificationId}`). Every key is always present; `null` where the state
/// does not know (a notification decided before this was kept, no context).
struct NotificationRecord: Codable, Equatable {
    var notificationId: String?
    var appId: String?
    /// `delivered` or `silenced`.
    var decision: String
    var reason: String?
    var focus: String?
    var contextVersion: Int64?
    /// RFC 3339, milliseconds.
    var decidedAt: String
    /// The input's `focusgate-source` (`topic/partition/offset`).
    var source: String?
    var unread: Bool
    var countedInBadge: Bool?
    var summarized: Bool

    init(_ item: HistoryItem) {
        self.notificationId = item.notificationID
        self.appId = item.appID
        self.decision = item.outcome.rawValue
        self.reason = item.reason?.rawValue
        self.focus = item.focus
        self.contextVersion = item.contextVersion
        self.decidedAt = Timestamp.rfc3339(milliseconds: item.decidedAtMilliseconds)
        self.source = item.source
        self.unread = item.unread
        self.countedInBadge = item.countedInBadge
        self.summarized = item.summarized
    }

    private enum CodingKeys: String, CodingKey {
        case notificationId, appId, decision, reason, focus, contextVersion, decidedAt, source, unread,
            countedInBadge, summarized
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.notificationId, forKey: .notificationId)
        try container.encode(self.appId, forKey: .appId)
        try container.encode(self.decision, forKey: .decision)
        try container.encode(self.reason, forKey: .reason)
        try container.encode(self.focus, forKey: .focus)
        try container.encode(self.contextVersion, forKey: .contextVersion)
        try container.encode(self.decidedAt, forKey: .decidedAt)
        try container.encode(self.source, forKey: .source)
        try container.encode(self.unread, forKey: .unread)
        try container.encode(self.countedInBadge, forKey: .countedInBadge)
        try container.encode(self.summarized, forKey: .summarized)
    }
}

/// `GET /v1/users/{userId}/notifications`: newest first; `nextCursor` (`null` on the last page)
/// is passed as `cursor` for the next.
struct UserNotifications: Codable {
    var userId: String
    var notifications: [NotificationRecord]
    var nextCursor: String?

    init(userId: String, notifications: [NotificationRecord], nextCursor: String?) {
        self.userId = userId
        self.notifications = notifications
        self.nextCursor = nextCursor
    }

    init(userId: String, page: HistoryPage) {
        self.init(
            userId: userId, notifications: page.items.map(NotificationRecord.init),
            nextCursor: page.nextCursor.map { "\($0)" })
    }

    private enum CodingKeys: String, CodingKey { case userId, notifications, nextCursor }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.userId, forKey: .userId)
        try container.encode(self.notifications, forKey: .notifications)
        try container.encode(self.nextCursor, forKey: .nextCursor)
    }
}

/// `GET /v1/instance/users/{userId}/notifications`: this instance's own page, for its peers.
struct InstanceNotifications: Codable {
    var userId: String
    var held: Bool
    var partitions: [Int32]
    var partitionCount: Int
    var notifications: [NotificationRecord]
    var nextCursor: String?
}

/// `GET /v1/instance/users/{userId}/notifications/{notificationId}`: this instance's own answer,
/// for its peers. `notification` is `null` when it holds the user but not the notification
/// (`forgotten`: it let some of the user's notifications go).
struct InstanceNotification: Codable {
    var userId: String
    var held: Bool
    var partitions: [Int32]
    var partitionCount: Int
    var notification: NotificationRecord?
    var forgotten: Bool
}
