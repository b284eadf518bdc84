/// A badge change for one (user, app), published to `notifications.badges` (key `userId/appId`).
public struct BadgeUpdate: Sendable, Hashable {
    public var userID: String
    public var appID: String
    /// Unread notifications that count in the current Focus.
    public var badge: Int
    /// All unread notifications, whatever the Focus.
    public var unread: Int
    /// The Focus that is on, if any.
    public var focus: String?
    /// The context version the badge was computed with, if any.
    public var contextVersion: Int64?
    /// Increases by one with every update of this (user, app).
    public var sequence: UInt64
    /// When the badge changed, Unix milliseconds.
    public var updatedAtMilliseconds: Int64

    /// Creates an update.
    public init(
        userID: String, appID: String, badge: Int, unread: Int, focus: String?, contextVersion: Int64?,
        sequence: UInt64, updatedAtMilliseconds: Int64
    ) {
        self.userID = userID
        self.appID = appID
        self.badge = badge
        self.unread = unread
        self.focus = focus
        self.contextVersion = contextVersion
        self.sequence = sequence
        self.updatedAtMilliseconds = updatedAtMilliseconds
    }

    /// The record key: `userId/appId`.
    public var key: String { "\(self.userID)/\(self.appID)" }

    /// Writes the record key, `userId/appId`, into `bytes` (replacing what it held).
    public func writeKey(into bytes: inout [UInt8]) {
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: self.userID.utf8)
        bytes.append(UInt8(ascii: "/"))
        bytes.append(contentsOf: self.appID.utf8)
    }

    /// The record value: `{"userId","appId","badge","unread","focus","contextVersion","sequence","updatedAt"}`,
    /// with `updatedAt` as an RFC 3339 UTC timestamp with milliseconds.
    public var jsonBytes: [UInt8] {
        var bytes: [UInt8] = []
        self.writeJSON(into: &bytes)
        return bytes
    }

    /// Writes ``jsonBytes`` into `bytes` (replacing what it held, keeping its capacity).
    public func writeJSON(into bytes: inout [UInt8]) {
        bytes.removeAll(keepingCapacity: true)
        let bound =
            112 + BoundedWriter.stringBound(self.userID) + BoundedWriter.stringBound(self.appID)
            + (self.focus.map(BoundedWriter.stringBound) ?? 4) + 4 * BoundedWriter.integerBound
            + BoundedWriter.timestampBound
        // The layout is fixed: written in one pass into space made once (a commit writes many).
        bytes.appendBounded(bound) { json in
            json.raw(#"{"userId":"#)
            json.string(self.userID)
            json.raw(#","appId":"#)
            json.string(self.appID)
            json.raw(#","badge":"#)
            json.integer(Int64(self.badge))
            json.raw(#","unread":"#)
            json.integer(Int64(self.unread))
            json.raw(#","focus":"#)
            if let focus = self.focus { json.string(focus) } else { json.raw("null") }
            json.raw(#","contextVersion":"#)
            if let version = self.contextVersion { json.integer(version) } else { json.raw("null") }
            json.raw(#","sequence":"#)
            json.integer(Int64(clamping: self.sequence))
            json.raw(#","updatedAt":""#)
            json.timestamp(milliseconds: self.updatedAtMilliseconds)
            json.raw(#""}"#)
        }
    }
}
