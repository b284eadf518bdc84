import FocusGateCore

// The admin API's answer bodies (docs/openapi.yaml, components and responses), encoded with
// sorted keys by `AdminAPI.json(_:status:)`.

/// `GET /healthz`.
struct Health: Encodable {
    var status = "ok"
}

/// `GET /readyz`: ready, and each named check.
struct ReadinessAnswer: Encodable {
    var ready: Bool
    var checks: [String: Bool]
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
