/// Why an input record cannot be processed; the record goes to the DLQ with ``code``.
///
/// Descriptions name fields and offsets, never values: a record's content is personal data.
public struct EventDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The DLQ error code (`focusgate-error` header), stable and bounded.
    public var code: Code
    /// The field concerned, if any (`userId`, `aps.relevance-score`, …).
    public var field: String?
    /// What is wrong, for the `focusgate-error-detail` header.
    public var detail: String

    /// Creates an error.
    public init(code: Code, field: String? = nil, detail: String) {
        self.code = code
        self.field = field
        self.detail = detail
    }

    public var description: String {
        "\(self.code.rawValue)\(self.field.map { " (\($0))" } ?? ""): \(self.detail)"
    }

    /// DLQ error codes.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { self.rawValue }

        /// Not well-formed UTF-8 JSON (also: nesting deeper than the limit, trailing bytes).
        public static let invalidJSON = Code(rawValue: "invalid-json")
        /// A required field is absent (or the record has no value).
        public static let missingField = Code(rawValue: "missing-field")
        /// A field has the wrong JSON type, or the root is not an object.
        public static let wrongType = Code(rawValue: "wrong-type")
        /// A field has a value outside its rules (unknown `type`, empty or over-long id).
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// A routing field appears twice, so its meaning is ambiguous.
        public static let duplicateField = Code(rawValue: "duplicate-field")
        /// The record is larger than `limits.maxEventBytes`.
        public static let tooLarge = Code(rawValue: "too-large")
        /// The Kafka key is present and differs from `userId`.
        public static let keyMismatch = Code(rawValue: "key-mismatch")
        /// The broker or the producer refused the record's outputs: for their size, or
        /// `commit.maxAttemptsPerInput` times in a row. Not a decoding error: the worker
        /// dead-letters the record on its replay so that its partition moves on.
        public static let undeliverable = Code(rawValue: "undeliverable")

        /// Every code, for metric labels.
        public static let all: [Code] = [
            .invalidJSON, .missingField, .wrongType, .invalidValue, .duplicateField, .tooLarge, .keyMismatch,
            .undeliverable,
        ]
    }
}
