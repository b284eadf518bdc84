/// Identifiers met before, found again by their bytes: the decoder takes an event's `appId` and
/// its filter criteria from here, so that a value longer than 15 UTF-8 bytes (too long for a
/// String's inline form, as `com.example.calendar` is) is not a heap allocation per record. Apps
/// and their criteria are few; a pool holds at most ``capacity`` identifiers, and past that new
/// ones are made per record as before.
///
/// One pool per worker (not `Sendable`), kept across batches.
public struct IdentifierPool {
    /// Most identifiers kept. Default: `1_024`.
    public let capacity: Int
    private var strings: [String] = []
    private var hashes: [UInt64] = []
    /// Open addressing over ``strings``: index + 1 per slot, `0` for empty; at most half full.
    private var slots: [UInt32]

    /// Identifiers this short are stored inline in a String: pooling them saves nothing.
    static let inlineBytes = 15

    /// Creates an empty pool.
    public init(capacity: Int = 1_024) {
        self.capacity = max(1, capacity)
        var size = 2
        while size < 2 * self.capacity { size *= 2 }
        self.slots = Array(repeating: 0, count: size)
    }

    /// Identifiers held.
    public var count: Int { self.strings.count }

    /// The identifier whose UTF-8 is `bytes`: the pooled copy, else a new String, kept while
    /// there is room.
    public mutating func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard bytes.count > Self.inlineBytes else { return String(decoding: bytes, as: UTF8.self) }
        let hash = StableHash.fnv1a(bytes, basis: 0xcbf2_9ce4_8422_2325)
        let mask = self.slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while self.slots[slot] != 0 {
            let index = Int(self.slots[slot] - 1)
            if self.hashes[index] == hash && Self.equal(self.strings[index], bytes) { return self.strings[index] }
            slot = (slot + 1) & mask
        }
        let made = String(decoding: bytes, as: UTF8.self)
        if self.strings.count < self.capacity {
            self.strings.append(made)
            self.hashes.append(hash)
            self.slots[slot] = UInt32(self.strings.count)
        }
        return made
    }

    private static func equal(_ text: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { stored in
            PredicateBytes.equal(UnsafeRawBufferPointer(stored), UnsafeRawBufferPointer(bytes))
        } ?? text.utf8.elementsEqual(bytes)
    }
}
