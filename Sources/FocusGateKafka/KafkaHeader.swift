/// A record header: a name and an optional byte value.
public struct KafkaHeader: Sendable, Hashable {
    /// The header name.
    public var name: String
    /// The value bytes, or `nil` for a header without value.
    public var value: [UInt8]?

    /// Creates a header with raw bytes.
    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    /// Creates a header whose value is the UTF-8 of `value`.
    public init(name: String, value: String) {
        self.name = name
        self.value = Array(value.utf8)
    }

    /// The value decoded as UTF-8, if it is present.
    public var stringValue: String? {
        self.value.map { String(decoding: $0, as: UTF8.self) }
    }
}
