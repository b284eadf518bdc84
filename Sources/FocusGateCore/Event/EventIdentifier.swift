/// A notification id as an event holds it: a String, or, for an id of 16 to ``inlineCapacity``
/// UTF-8 bytes decoded from a record, the bytes themselves inside the event. A String keeps up to
/// 15 bytes inline; a longer one, as a UUID (36 bytes) is, would be a heap allocation per record
/// for an id the partition state only hashes and copies into its own storage.
///
/// Equal and hashed by the id's UTF-8 bytes, whichever way it is held.
struct EventIdentifier: Sendable, Hashable {
    /// Most bytes held inside the identifier.
    static let inlineCapacity = 40

    /// The id when it is not held inline; empty when it is.
    private var text: String
    /// The id's bytes when held inline (a count of 0 when not): two plain fields rather than an
    /// enum, so that an event copies with one retain and a few words, no switch.
    private var inline: InlineBytes

    init(_ string: String) {
        self.text = string
        self.inline = InlineBytes()
    }

    /// The identifier of `bytes` (valid UTF-8): held inline when longer than a String holds
    /// inline and at most ``inlineCapacity`` bytes, else a String.
    init(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count > IdentifierPool.inlineBytes, let inline = InlineBytes(bytes) {
            self.text = ""
            self.inline = inline
        } else {
            self.text = String(decoding: bytes, as: UTF8.self)
            self.inline = InlineBytes()
        }
    }

    /// Whether the bytes are held inside the identifier (no String was made for it).
    var isInline: Bool { self.inline.count > 0 }

    /// The identifier as a String (made here for one held inline).
    var string: String {
        self.isInline ? self.inline.withBytes { String(decoding: $0, as: UTF8.self) } : self.text
    }

    /// Calls `body` with the identifier's UTF-8 bytes, valid only during the call.
    @inline(__always)
    func withUTF8<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if self.isInline { return try self.inline.withBytes(body) }
        var text = self.text
        return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    static func == (lhs: EventIdentifier, rhs: EventIdentifier) -> Bool {
        lhs.withUTF8 { left in rhs.withUTF8 { right in PredicateBytes.equal(left, right) } }
    }

    func hash(into hasher: inout Hasher) {
        self.withUTF8 { hasher.combine(bytes: $0) }
    }

    /// Up to ``EventIdentifier/inlineCapacity`` bytes and their count, copied as a value.
    private struct InlineBytes: Sendable {
        private var words: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        let count: UInt8

        /// None held.
        init() {
            self.count = 0
        }

        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard bytes.count <= EventIdentifier.inlineCapacity else { return nil }
            self.count = UInt8(bytes.count)
            withUnsafeMutableBytes(of: &self.words) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
        }

        @inline(__always)
        func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try withUnsafeBytes(of: self.words) {
                try body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(self.count))))
            }
        }
    }
}
