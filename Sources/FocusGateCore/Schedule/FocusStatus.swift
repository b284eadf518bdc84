// MARK: - Focus status, as senders see it

/// Whether a user is focused, as `focus.status` and `GET /v1/users/{id}/status` tell senders:
/// never the Focus's name (docs/focus-schedules.md, Focus status).
public struct FocusStatus: Sendable, Hashable {
    /// A Focus that shares its status is on.
    public var focused: Bool
    /// When the user stops being focused (Unix ms), when the context says; `nil`: not known.
    public var until: Int64?
    /// The context version it was worked out from; `nil`: the user has no context.
    public var contextVersion: Int64?

    /// Creates a status.
    public init(focused: Bool, until: Int64?, contextVersion: Int64?) {
        self.focused = focused
        self.until = until
        self.contextVersion = contextVersion
    }
}

/// A change of a user's ``FocusStatus``, published on `focus.status` (key: the user id).
public struct FocusStatusUpdate: Sendable, Hashable {
    public var userID: String
    public var status: FocusStatus
    /// Increases by one per change of the user's status.
    public var sequence: UInt64
    public var updatedAtMilliseconds: Int64

    /// Creates an update.
    public init(userID: String, status: FocusStatus, sequence: UInt64, updatedAtMilliseconds: Int64) {
        self.userID = userID
        self.status = status
        self.sequence = sequence
        self.updatedAtMilliseconds = updatedAtMilliseconds
    }

    /// The record's value: `{"userId","focused","until","contextVersion","sequence","updatedAt"}`.
    public func writeJSON(into bytes: inout [UInt8]) {
        bytes.removeAll(keepingCapacity: true)
        let bound =
            96 + BoundedWriter.stringBound(self.userID) + 2 * BoundedWriter.integerBound
            + 2 * BoundedWriter.timestampBound
        // The layout is fixed: written in one pass into space made once (a transition writes many).
        bytes.appendBounded(bound) { json in
            json.raw(#"{"userId":"#)
            json.string(self.userID)
            json.raw(self.status.focused ? #","focused":true"# : #","focused":false"#)
            if let until = self.status.until {
                json.raw(#","until":""#)
                json.timestamp(milliseconds: until)
                json.raw(#"""#)
            } else {
                json.raw(#","until":null"#)
            }
            json.raw(#","contextVersion":"#)
            if let version = self.status.contextVersion { json.integer(version) } else { json.raw("null") }
            json.raw(#","sequence":"#)
            json.integer(Int64(clamping: self.sequence))
            json.raw(#","updatedAt":""#)
            json.timestamp(milliseconds: self.updatedAtMilliseconds)
            json.raw(#""}"#)
        }
    }
}
