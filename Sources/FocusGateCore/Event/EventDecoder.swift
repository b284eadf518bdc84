/// Decodes the routing fields of a notification event from the raw Kafka value (docs/contract.md, Notification events),
/// without building Swift values for the rest of the payload, which is still validated as JSON.
public struct EventDecoder: Sendable {
    /// Records larger than this go to the DLQ as `too-large` (`limits.maxEventBytes`). Default: `65_536`.
    public var maxEventBytes: Int
    /// Deeper nesting is `invalid-json`, bounding the work and stack a record can demand. Default: `64`.
    public var maxDepth: Int
    /// Longest `id`, `userId` and `appId`, in UTF-8 bytes.
    public static let maxIdentifierBytes = 256

    /// Creates a decoder.
    public init(maxEventBytes: Int = 65_536, maxDepth: Int = 64) {
        self.maxEventBytes = maxEventBytes
        self.maxDepth = maxDepth
    }

    /// Decodes one record.
    ///
    /// - Parameters:
    ///   - value: The record value; `nil` (a tombstone) is `missing-field`.
    ///   - key: The record key; when present it must equal `userId`.
    /// - Returns: The routing fields.
    /// - Throws: ``EventDecodingError`` with the DLQ code.
    public func decode(value: UnsafeRawBufferPointer?, key: UnsafeRawBufferPointer?) throws(EventDecodingError)
        -> NotificationEvent
    {
        try self.decode(value: value, key: key) { scanner, token in scanner.string(token) }
    }

    /// Decodes one record, taking its `appId` and its filter criteria from `identifiers` (see
    /// ``IdentifierPool``): values a worker meets again and again, made once rather than per
    /// record. Otherwise as ``decode(value:key:)``.
    public func decode(
        value: UnsafeRawBufferPointer?, key: UnsafeRawBufferPointer?, identifiers: inout IdentifierPool
    ) throws(EventDecodingError) -> NotificationEvent {
        try self.decode(value: value, key: key) { scanner, token in
            token.hasEscapes ? scanner.string(token) : scanner.withBytes(token) { identifiers.string($0) }
        }
    }

    private func decode(
        value: UnsafeRawBufferPointer?, key: UnsafeRawBufferPointer?,
        intern: (JSONScanner, JSONScanner.StringToken) -> String
    ) throws(EventDecodingError) -> NotificationEvent {
        guard let value else {
            throw EventDecodingError(code: .missingField, detail: "record has no value")
        }
        guard value.count <= self.maxEventBytes else {
            throw EventDecodingError(code: .tooLarge, detail: "\(value.count) bytes, limit \(self.maxEventBytes)")
        }
        var scanner = JSONScanner(value, maxDepth: self.maxDepth)
        guard let first = scanner.peek() else {
            throw EventDecodingError(code: .invalidJSON, detail: "empty value")
        }
        guard first == UInt8(ascii: "{") else {
            // Validate first, so that garbage is reported as invalid JSON rather than a wrong type.
            try scanner.skipValue(depth: 0)
            try Self.expectEnd(&scanner)
            throw EventDecodingError(code: .wrongType, detail: "the event must be a JSON object")
        }
        var fields = Fields()
        try scanner.forEachMember(depth: 1) { (scanner, key) throws(EventDecodingError) in
            try fields.read(member: key, &scanner)
        }
        try Self.expectEnd(&scanner)
        return try fields.event(scanner, key: key, intern: intern)
    }

    /// Decodes from byte arrays; see ``decode(value:key:)``.
    public func decode(_ value: [UInt8], key: [UInt8]? = nil) throws(EventDecodingError) -> NotificationEvent {
        let result = value.withUnsafeBytes { valueBytes in
            Self.withOptional(key) { keyBytes in
                Result { () throws(EventDecodingError) in try self.decode(value: valueBytes, key: keyBytes) }
            }
        }
        return try result.get()
    }

    private static func withOptional<R>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard let bytes else { return body(nil) }
        return bytes.withUnsafeBytes { body($0) }
    }

    private static func expectEnd(_ scanner: inout JSONScanner) throws(EventDecodingError) {
        scanner.skipWhitespace()
        guard scanner.isAtEnd else { throw scanner.invalid("trailing bytes after the event") }
    }
}

// MARK: - Fields

extension EventDecoder {
    /// The routing members found while scanning, as positions into the buffer.
    private struct Fields {
        var type: JSONScanner.StringToken?
        var id: JSONScanner.StringToken?
        var userID: JSONScanner.StringToken?
        var appID: JSONScanner.StringToken?
        var criteria: JSONScanner.StringToken?
        var apsCriteria: JSONScanner.StringToken?
        var level: JSONScanner.StringToken?
        var apsLevel: JSONScanner.StringToken?
        var score: Double?
        var apsScore: Double?
        var notificationIDs: [String]?
        var senderID: JSONScanner.StringToken?
        var threadID: JSONScanner.StringToken?
        var apsThreadID: JSONScanner.StringToken?
        var seen: UInt32 = 0

        mutating func read(member key: JSONScanner.StringToken, _ scanner: inout JSONScanner) throws(EventDecodingError)
        {
            let next = scanner.peek()
            if scanner.equals(key, "type") {
                try self.mark(0, "type")
                self.type = try Self.requiredString(&scanner, next, "type")
            } else if scanner.equals(key, "id") {
                try self.mark(1, "id")
                self.id = try Self.requiredString(&scanner, next, "id")
            } else if scanner.equals(key, "userId") {
                try self.mark(2, "userId")
                self.userID = try Self.requiredString(&scanner, next, "userId")
            } else if scanner.equals(key, "appId") {
                try self.mark(3, "appId")
                self.appID = try Self.requiredString(&scanner, next, "appId")
            } else if scanner.equals(key, "filterCriteria") {
                try self.mark(4, "filterCriteria")
                self.criteria = try Self.optionalString(&scanner, next)
            } else if scanner.equals(key, "interruptionLevel") {
                try self.mark(5, "interruptionLevel")
                self.level = try Self.optionalString(&scanner, next)
            } else if scanner.equals(key, "relevanceScore") {
                try self.mark(6, "relevanceScore")
                self.score = try Self.optionalNumber(&scanner, next)
            } else if scanner.equals(key, "notificationIds") {
                try self.mark(7, "notificationIds")
                self.notificationIDs = try Self.stringArray(&scanner, next, "notificationIds")
            } else if scanner.equals(key, "senderId") {
                try self.mark(12, "senderId")
                self.senderID = try Self.requiredString(&scanner, next, "senderId")
            } else if scanner.equals(key, "threadId") {
                try self.mark(13, "threadId")
                self.threadID = try Self.optionalString(&scanner, next)
            } else if scanner.equals(key, "aps") && next == UInt8(ascii: "{") {
                try self.mark(8, "aps")
                try scanner.forEachMember(depth: 2) { (scanner, key) throws(EventDecodingError) in
                    try self.read(apsMember: key, &scanner)
                }
            } else {
                try scanner.skipValue(depth: 1)
            }
        }

        mutating func read(apsMember key: JSONScanner.StringToken, _ scanner: inout JSONScanner)
            throws(EventDecodingError)
        {
            let next = scanner.peek()
            if scanner.equals(key, "filter-criteria") {
                try self.mark(9, "aps.filter-criteria")
                self.apsCriteria = try Self.optionalString(&scanner, next)
            } else if scanner.equals(key, "interruption-level") {
                try self.mark(10, "aps.interruption-level")
                self.apsLevel = try Self.optionalString(&scanner, next)
            } else if scanner.equals(key, "relevance-score") {
                try self.mark(11, "aps.relevance-score")
                self.apsScore = try Self.optionalNumber(&scanner, next)
            } else if scanner.equals(key, "thread-id") {
                try self.mark(14, "aps.thread-id")
                self.apsThreadID = try Self.optionalString(&scanner, next)
            } else {
                try scanner.skipValue(depth: 2)
            }
        }

        private mutating func mark(_ bit: UInt32, _ field: StaticString) throws(EventDecodingError) {
            guard self.seen & (1 << bit) == 0 else {
                throw EventDecodingError(
                    code: .duplicateField, field: "\(field)", detail: "\(field) appears more than once")
            }
            self.seen |= 1 << bit
        }

        // MARK: Member values

        private static func requiredString(_ scanner: inout JSONScanner, _ next: UInt8?, _ field: StaticString)
            throws(EventDecodingError) -> JSONScanner.StringToken
        {
            guard next == UInt8(ascii: "\"") else {
                try scanner.skipValue(depth: 1)
                throw EventDecodingError(code: .wrongType, field: "\(field)", detail: "\(field) must be a string")
            }
            return try scanner.scanString()
        }

        /// A string, or `nil` for any other type (which the contract says to ignore).
        private static func optionalString(_ scanner: inout JSONScanner, _ next: UInt8?) throws(EventDecodingError)
            -> JSONScanner.StringToken?
        {
            guard next == UInt8(ascii: "\"") else {
                try scanner.skipValue(depth: 1)
                return nil
            }
            return try scanner.scanString()
        }

        private static func optionalNumber(_ scanner: inout JSONScanner, _ next: UInt8?) throws(EventDecodingError)
            -> Double?
        {
            guard let next, next == UInt8(ascii: "-") || next &- UInt8(ascii: "0") < 10 else {
                try scanner.skipValue(depth: 1)
                return nil
            }
            return try scanner.scanNumber()
        }

        private static func stringArray(_ scanner: inout JSONScanner, _ next: UInt8?, _ field: StaticString)
            throws(EventDecodingError) -> [String]
        {
            guard next == UInt8(ascii: "[") else {
                try scanner.skipValue(depth: 1)
                throw EventDecodingError(
                    code: .wrongType, field: "\(field)", detail: "\(field) must be an array of strings")
            }
            var values: [String] = []
            try scanner.forEachElement(depth: 2) { (scanner) throws(EventDecodingError) in
                guard scanner.peek() == UInt8(ascii: "\"") else {
                    throw EventDecodingError(
                        code: .wrongType, field: "\(field)", detail: "\(field) must be an array of strings")
                }
                let token = try scanner.scanString()
                guard token.end - token.start <= EventDecoder.maxIdentifierBytes else {
                    throw EventDecodingError(
                        code: .invalidValue, field: "\(field)",
                        detail: "an id is longer than \(EventDecoder.maxIdentifierBytes) bytes")
                }
                values.append(scanner.string(token))
            }
            return values
        }

        // MARK: Assembling

        func event(
            _ scanner: JSONScanner, key: UnsafeRawBufferPointer?,
            intern: (JSONScanner, JSONScanner.StringToken) -> String
        ) throws(EventDecodingError) -> NotificationEvent {
            var kind = NotificationEvent.Kind.notification
            if let type = self.type {
                if scanner.equals(type, "notification") {
                    kind = .notification
                } else if scanner.equals(type, "read") {
                    kind = .read
                } else if scanner.equals(type, "clear") {
                    kind = .clear
                } else {
                    throw EventDecodingError(
                        code: .invalidValue, field: "type", detail: "type must be notification, read or clear")
                }
            }
            // The id is only hashed and copied by the state: its bytes are held in the event.
            let id = try Self.identifier(self.id, "id", scanner) { scanner, token in
                token.hasEscapes
                    ? EventIdentifier(scanner.string(token)) : scanner.withBytes(token) { EventIdentifier(utf8: $0) }
            }
            let userID = try Self.identifier(self.userID, "userId", scanner) { $0.string($1) }
            let appID = try Self.identifier(self.appID, "appId", scanner, make: intern)
            if let key, !scanner.equals(self.userID!, key) {
                throw EventDecodingError(
                    code: .keyMismatch, field: "userId", detail: "the record key differs from userId")
            }
            var notificationIDs: [String] = []
            if kind == .read {
                guard let ids = self.notificationIDs else {
                    throw EventDecodingError(
                        code: .missingField, field: "notificationIds", detail: "a read event needs notificationIds")
                }
                notificationIDs = ids
            }
            let senderID = try self.senderID.map { (token) throws(EventDecodingError) in
                try Self.identifier(token, "senderId", scanner) { $0.string($1) }
            }
            let criteria = (self.criteria ?? self.apsCriteria).map { intern(scanner, $0) }
            let level = (self.level ?? self.apsLevel).map { Self.level(scanner, $0) } ?? .active
            let score = (self.score ?? self.apsScore).map { min(max($0, 0), 1) }
            // A thread only groups a summary: one that is empty or too long is ignored, not refused.
            let thread = (self.threadID ?? self.apsThreadID).flatMap { token in
                token.end > token.start && token.end - token.start <= EventDecoder.maxIdentifierBytes
                    ? scanner.string(token) : nil
            }
            return NotificationEvent(
                kind: kind, identifier: id, userID: userID, appID: appID, filterCriteria: criteria,
                interruptionLevel: level, relevanceScore: score, notificationIDs: notificationIDs, senderID: senderID,
                threadID: thread
            )
        }

        /// The level from the token's bytes; an escaped value is read as its text.
        private static func level(_ scanner: JSONScanner, _ token: JSONScanner.StringToken) -> InterruptionLevel {
            if token.hasEscapes { return InterruptionLevel(parsing: scanner.string(token)) }
            return scanner.withBytes(token) { InterruptionLevel(parsingUTF8: $0) }
        }

        private static func identifier<Identifier>(
            _ token: JSONScanner.StringToken?, _ field: String, _ scanner: JSONScanner,
            make: (JSONScanner, JSONScanner.StringToken) -> Identifier
        ) throws(EventDecodingError) -> Identifier {
            guard let token else {
                throw EventDecodingError(code: .missingField, field: field, detail: "\(field) is required")
            }
            guard token.end > token.start else {
                throw EventDecodingError(code: .invalidValue, field: field, detail: "\(field) is empty")
            }
            guard token.end - token.start <= EventDecoder.maxIdentifierBytes else {
                throw EventDecodingError(
                    code: .invalidValue, field: field,
                    detail: "\(field) is longer than \(EventDecoder.maxIdentifierBytes) bytes")
            }
            return make(scanner, token)
        }
    }
}
