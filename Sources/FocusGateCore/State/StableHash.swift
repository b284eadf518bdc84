/// The 64-bit FNV-1a hashes the state keys its records by (notification ids, senders, apps) and
/// the people lists are looked up by. Stable across versions: the changelog keeps them.
enum StableHash {
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// 64-bit FNV-1a of `text`'s UTF-8 bytes from `basis`: over the contiguous bytes of a native
    /// string (a few instructions a byte), else byte by byte.
    static func fnv1a(_ text: String, basis: UInt64) -> UInt64 {
        text.utf8.withContiguousStorageIfAvailable { self.fnv1a($0, basis: basis) }
            ?? self.fnv1a(text.utf8, basis: basis)
    }

    /// 64-bit FNV-1a of `bytes` from `basis`.
    static func fnv1a(_ bytes: some Sequence<UInt8>, basis: UInt64) -> UInt64 {
        var hash = basis
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* self.prime
        }
        return hash
    }

    /// A sender id's hash (another basis than notification ids').
    static func sender(_ senderID: String) -> UInt64 {
        self.fnv1a(senderID, basis: 0x84_2222_325c_bf29)
    }
}
