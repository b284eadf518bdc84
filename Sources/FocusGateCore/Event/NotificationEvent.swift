/// The routing fields of one input record (docs/contract.md, Notification events). Everything else in the record (`aps`,
/// `payload`, …) is passed through untouched as the original bytes, never decoded.
public struct NotificationEvent: Sendable, Hashable {
    /// `notification` (default), `read` or `clear`.
    public var kind: Kind
    /// Idempotency key within a user.
    public var id: String {
        get { self.identifier.string }
        set { self.identifier = EventIdentifier(newValue) }
    }
    /// The id as held: its bytes inside the event when the decoder read an id a String could
    /// not hold inline, so that the state hashes and keeps it without a String made per record.
    var identifier: EventIdentifier
    /// The user the event is for; equals the Kafka key when the key is present.
    public var userID: String
    /// The app's bundle id.
    public var appID: String
    /// `filterCriteria`, else `aps["filter-criteria"]`; `nil` when neither is a string.
    public var filterCriteria: String?
    /// `interruptionLevel`, else `aps["interruption-level"]`; anything but the four exact values is `.active`.
    public var interruptionLevel: InterruptionLevel
    /// `relevanceScore`, else `aps["relevance-score"]`, clamped to 0…1; `nil` when neither is a number.
    public var relevanceScore: Double?
    /// For `read`: the notifications marked read.
    public var notificationIDs: [String]
    /// `senderId`: the person who sent the notification, as the Focus's people lists name them;
    /// `nil` when the event does not say.
    public var senderID: String?
    /// `threadId`, else `aps["thread-id"]`: the conversation the notification belongs to, which
    /// summaries count by; `nil` when neither is a non-empty string of at most 256 bytes.
    public var threadID: String?

    /// Creates an event.
    public init(
        kind: Kind = .notification,
        id: String,
        userID: String,
        appID: String,
        filterCriteria: String? = nil,
        interruptionLevel: InterruptionLevel = .active,
        relevanceScore: Double? = nil,
        notificationIDs: [String] = [],
        senderID: String? = nil,
        threadID: String? = nil
    ) {
        self.init(
            kind: kind, identifier: EventIdentifier(id), userID: userID, appID: appID, filterCriteria: filterCriteria,
            interruptionLevel: interruptionLevel, relevanceScore: relevanceScore, notificationIDs: notificationIDs,
            senderID: senderID, threadID: threadID)
    }

    /// An event with its id as the decoder read it.
    init(
        kind: Kind, identifier: EventIdentifier, userID: String, appID: String, filterCriteria: String?,
        interruptionLevel: InterruptionLevel, relevanceScore: Double?, notificationIDs: [String], senderID: String?,
        threadID: String?
    ) {
        self.kind = kind
        self.identifier = identifier
        self.userID = userID
        self.appID = appID
        self.filterCriteria = filterCriteria
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.notificationIDs = notificationIDs
        self.senderID = senderID
        self.threadID = threadID
    }

    /// What the event asks for.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A notification to decide and deliver or silence.
        case notification
        /// Marks `notificationIDs` of the app read.
        case read
        /// Marks all of the app's notifications read.
        case clear
    }
}

/// Apple's interruption levels (`UNNotificationInterruptionLevel`).
///
/// A level is a small code, not its text: an event copies without reference counting for it, and
/// comparisons compare no text.
public struct InterruptionLevel: Sendable, Hashable, CustomStringConvertible {
    private let code: UInt8

    public static let passive = InterruptionLevel(code: 0)
    public static let active = InterruptionLevel(code: 1)
    public static let timeSensitive = InterruptionLevel(code: 2)
    public static let critical = InterruptionLevel(code: 3)

    /// The level as Apple spells it.
    public var rawValue: String {
        switch self.code {
        case 0: "passive"
        case 2: "time-sensitive"
        case 3: "critical"
        default: "active"
        }
    }

    /// The level for a string as Apple reads it: exactly one of the four values, else `active`.
    public init(parsing text: String) {
        var text = text
        self = text.withUTF8 { InterruptionLevel(parsingUTF8: $0) }
    }

    /// The level for a string's UTF-8 bytes, as ``init(parsing:)`` reads it (the event decoder
    /// reads it from the record's bytes without making a String).
    public init(parsingUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        let bytes = UnsafeRawBufferPointer(bytes)
        if Self.equal(bytes, "passive") {
            self = .passive
        } else if Self.equal(bytes, "time-sensitive") {
            self = .timeSensitive
        } else if Self.equal(bytes, "critical") {
            self = .critical
        } else {
            self = .active
        }
    }

    private init(code: UInt8) {
        self.code = code
    }

    /// Compared as bytes with a literal, not walked as a String's UTF-8 view byte by byte.
    private static func equal(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        PredicateBytes.equal(bytes, UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    public var description: String { self.rawValue }
}
