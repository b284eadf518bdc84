#if canImport(Glibc)
    import Glibc
#endif

/// A user id as Kafka and the stores see it: its UTF-8 bytes.
///
/// Kafka routes a record by the bytes of its key, and SQLite and PostgreSQL compare `user_id` as
/// bytes, but a Swift `String` is equal to, and hashes like, any string canonically equivalent to
/// it: the NFC and NFD spellings of `café`, or `K` and the Kelvin sign (U+212A), are one `String`.
/// Used as a key wherever FocusGate holds something per user (the context cache, the partition
/// state, a batch's loads, a store's answer), this type keeps two such users apart, and spares the
/// hot path the normalization a non-ASCII `String` comparison or hash runs.
public struct UserID: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The id as text.
    public let string: String

    /// The user id `string`.
    public init(_ string: String) {
        self.string = string
    }

    public init(stringLiteral value: String) {
        self.string = value
    }

    public var description: String { self.string }

    public static func == (lhs: UserID, rhs: UserID) -> Bool {
        Self.sameBytes(lhs.string, rhs.string)
    }

    public func hash(into hasher: inout Hasher) {
        Self.hashBytes(of: self.string, into: &hasher)
    }

    // MARK: - Bytes of a String

    /// Whether `lhs` and `rhs` have the same UTF-8 bytes (not merely canonical equivalence).
    public static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        // memcmp: a generic element loop cost the state's lookups about ten instructions a byte.
        let contiguous = left.withContiguousStorageIfAvailable { leftBytes in
            right.withContiguousStorageIfAvailable { rightBytes in
                leftBytes.isEmpty || memcmp(leftBytes.baseAddress!, rightBytes.baseAddress!, leftBytes.count) == 0
            }
        }
        if case .some(.some(let equal)) = contiguous { return equal }
        return left.elementsEqual(right)
    }

    /// Feeds `string`'s UTF-8 bytes to `hasher` (as ``UserID`` hashes).
    public static func hashBytes(of string: String, into hasher: inout Hasher) {
        var text = string
        text.makeContiguousUTF8()  // a no-op for a native string, as every decoded id is
        _ = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
