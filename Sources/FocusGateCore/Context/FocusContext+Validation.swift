public import Foundation

/// Why a context document is refused; ``field`` names the offending field (`apps.com.x.filterPredicate`).
public struct FocusContextError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable code: `invalid-json`, `missing-field`, `wrong-type`, `invalid-value`, `invalid-predicate`.
    public var code: String
    /// The field concerned, as a dotted path.
    public var field: String?
    /// What is wrong.
    public var message: String
    /// For `invalid-predicate`: the parser's error, with position and reason.
    public var predicateError: FilterPredicateError?

    /// Creates an error.
    public init(code: String, field: String?, message: String, predicateError: FilterPredicateError? = nil) {
        self.code = code
        self.field = field
        self.message = message
        self.predicateError = predicateError
    }

    public var description: String {
        "\(self.code)\(self.field.map { " (\($0))" } ?? ""): \(self.message)"
    }
}

extension FocusContext {
    /// Longest user id, app id and sender id, in UTF-8 bytes (as for events).
    public static let maxIdentifierBytes = 256
    /// Most sender ids in each of ``People/allowed`` and ``People/silenced``.
    public static let maxPeoplePerList = 10_000

    /// Decodes and validates a context document.
    ///
    /// - Throws: ``FocusContextError`` naming the field.
    public static func decode(from data: Data) throws(FocusContextError) -> FocusContext {
        let context: FocusContext
        do {
            context = try self.jsonDecoder.decode(FocusContext.self, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
                let problem = Self.numberOutOfRange(in: data)
            {
                throw problem
            }
            throw Self.describe(error)
        } catch {
            throw FocusContextError(code: "invalid-json", field: nil, message: "\(error)")
        }
        try context.validate()
        return context
    }

    /// The document as JSON, with sorted keys and ISO 8601 dates.
    public func encoded() -> Data {
        // Encoding plain values to JSON cannot fail.
        try! Self.jsonEncoder.encode(self)
    }

    /// The largest context version: 2^53 - 1. Versions go out in badge and status records and in
    /// the admin API's answers as JSON numbers, which readers that hold numbers as doubles
    /// (JavaScript, many JSON libraries) read exactly only up to here.
    public static let maximumVersion: Int64 = (1 << 53) - 1

    /// Checks the rules of docs/contract.md, Focus contexts, that types do not: ids, version, and that every predicate compiles.
    public func validate() throws(FocusContextError) {
        try Self.checkIdentifier(self.userID, field: "userId")
        guard self.version >= 0 else {
            throw FocusContextError(code: "invalid-value", field: "version", message: "version must not be negative")
        }
        guard self.version <= Self.maximumVersion else {
            throw FocusContextError(
                code: "invalid-value", field: "version",
                message:
                    "version must be at most \(Self.maximumVersion) (2^53 - 1), what every JSON reader holds exactly")
        }
        if let focus = self.focus, focus.isEmpty {
            throw FocusContextError(code: "invalid-value", field: "focus", message: "focus is a non-empty name or null")
        }
        // The name goes out in every output's focusgate-focus header: bounded, so that an
        // output's own headers are.
        if let focus = self.focus, focus.utf8.count > Self.maxIdentifierBytes {
            throw FocusContextError(
                code: "invalid-value", field: "focus", message: "focus is longer than \(Self.maxIdentifierBytes) bytes")
        }
        try Self.checkConfiguration(
            FocusConfiguration(
                allowTimeSensitive: self.allowTimeSensitive, hideBadges: self.hideBadges, otherApps: self.otherApps,
                apps: self.apps, people: self.people, rateLimits: self.rateLimits))
        try self.validateSchedules()
    }

    /// Checks what a Focus allows: app ids, predicates, people lists and rate limits.
    static func checkConfiguration(_ configuration: FocusConfiguration) throws(FocusContextError) {
        for (appID, filter) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            try Self.checkIdentifier(appID, field: "apps")
            if let text = filter.filterPredicate {
                do {
                    _ = try FilterPredicate(text)
                } catch {
                    throw FocusContextError(
                        code: "invalid-predicate", field: "apps.\(appID).filterPredicate",
                        message: "\(error)", predicateError: error
                    )
                }
            }
        }
        if let people = configuration.people {
            try Self.checkPeople(people)
        }
        if let limits = configuration.rateLimits {
            try Self.checkRateLimits(limits)
        }
    }

    private static func checkPeople(_ people: People) throws(FocusContextError) {
        for (list, field) in [(people.allowed, "people.allowed"), (people.silenced, "people.silenced")] {
            guard list.count <= self.maxPeoplePerList else {
                throw FocusContextError(
                    code: "invalid-value", field: field,
                    message: "\(field) names \(list.count) people, more than \(self.maxPeoplePerList)")
            }
            for senderID in list {
                try self.checkIdentifier(senderID, field: field)
            }
        }
        let allowed = Set(people.allowed)
        if let both = people.silenced.first(where: { allowed.contains($0) }) {
            throw FocusContextError(
                code: "invalid-value", field: "people", message: "'\(both)' is both allowed and silenced")
        }
    }

    /// Warnings of the context's predicates (e.g. AND/OR mixed without parentheses), by field.
    public var predicateWarnings: [(field: String, warning: FilterPredicateWarning)] {
        self.apps.sorted { $0.key < $1.key }.flatMap { appID, filter in
            ((try? filter.filterPredicate.map { try FilterPredicate($0) }) ?? nil)?.warnings.map {
                ("apps.\(appID).filterPredicate", $0)
            } ?? []
        }
    }

    private static func checkIdentifier(_ value: String, field: String) throws(FocusContextError) {
        guard !value.isEmpty else {
            throw FocusContextError(code: "invalid-value", field: field, message: "\(field) must not be empty")
        }
        guard value.utf8.count <= self.maxIdentifierBytes else {
            throw FocusContextError(
                code: "invalid-value", field: field, message: "\(field) is longer than \(self.maxIdentifierBytes) bytes"
            )
        }
    }

    /// A document that is valid JSON but whose decoding failed without a path: a number that
    /// does not fit (beyond what a 64-bit integer or a double holds, or a fraction where an
    /// integer is expected), which the decoder reports as "not valid JSON". Named by its path
    /// where it can be found (`parameters`, opaque, are not looked in); `nil` for invalid JSON.
    static func numberOutOfRange(in data: Data) -> FocusContextError? {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let description = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
            guard description.contains("not representable") else { return nil }
            return FocusContextError(code: "invalid-value", field: nil, message: "a number is out of range")
        }
        func find(_ value: Any, _ path: String) -> String? {
            switch value {
            case let object as [String: Any]:
                for key in object.keys.sorted() where key != "parameters" {
                    if let found = find(object[key]!, path.isEmpty ? key : "\(path).\(key)") { return found }
                }
            case let array as [Any]:
                for (index, element) in array.enumerated() {
                    if let found = find(element, "\(path)[\(index)]") { return found }
                }
            case is NSDecimalNumber:
                return path
            case let number as NSNumber where !(value is Bool):
                let double = number.doubleValue
                if String(cString: number.objCType) == "d", double.rounded() != double { return path }
            default:
                break
            }
            return nil
        }
        guard let field = find(root, "") else { return nil }
        return FocusContextError(
            code: "invalid-value", field: field.isEmpty ? nil : field,
            message: "a number out of range or not an integer where an integer is expected")
    }

    private static func describe(_ error: DecodingError) -> FocusContextError {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String? {
            // `schedules[0].start`: array places in brackets, as validation names them.
            let keys = codingPath + (last.map { [$0] } ?? [])
            guard !keys.isEmpty else { return nil }
            return keys.reduce(into: "") { path, key in
                if let index = key.intValue, key.stringValue == "Index \(index)" {
                    path += "[\(index)]"
                } else {
                    path += (path.isEmpty ? "" : ".") + key.stringValue
                }
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            return FocusContextError(
                code: "missing-field", field: path(context.codingPath, key), message: "\(key.stringValue) is required")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return FocusContextError(code: "wrong-type", field: path(context.codingPath), message: "has the wrong type")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return FocusContextError(code: "invalid-json", field: nil, message: "not valid JSON")
            }
            return FocusContextError(
                code: "invalid-value", field: path(context.codingPath), message: context.debugDescription)
        @unknown default:
            return FocusContextError(code: "invalid-json", field: nil, message: "not a context document")
        }
    }

    /// The decoder of context documents: dates as RFC 3339 (``Timestamp/parseRFC3339(_:)``),
    /// integers exactly.
    public static let jsonDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let milliseconds = Timestamp.parseRFC3339(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an ISO 8601 timestamp such as 2026-11-21T18:00:00Z")
            }
            return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
        return decoder
    }()

    /// The encoder of context documents: sorted keys, dates as RFC 3339 with milliseconds. Also
    /// for documents that embed contexts (the admin API's answers).
    public static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(
                Timestamp.rfc3339(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down))))
        }
        return encoder
    }()
}
