/// An immutable hash set of byte strings, looked up with a borrowed buffer: no allocation per lookup.
///
/// Used for `SELF IN {…}` with many elements. All strings live in one contiguous storage.
struct ByteStringSet: Sendable {
    private let storage: [UInt8]
    private let offsets: [Int]  // string i is storage[offsets[i]..<offsets[i + 1]]
    private let slots: [Int32]  // open addressing, -1 = empty
    private let mask: Int

    init(_ strings: [[UInt8]]) {
        let unique = Array(Set(strings))
        var storage: [UInt8] = []
        var offsets: [Int] = [0]
        for string in unique {
            storage.append(contentsOf: string)
            offsets.append(storage.count)
        }
        var capacity = 4
        while capacity < unique.count * 2 { capacity *= 2 }
        var slots = [Int32](repeating: -1, count: capacity)
        for (index, string) in unique.enumerated() {
            var slot = string.withUnsafeBytes { Self.hash($0) } & (capacity - 1)
            while slots[slot] != -1 { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = Int32(index)
        }
        self.storage = storage
        self.offsets = offsets
        self.slots = slots
        self.mask = capacity - 1
    }

    var count: Int { self.offsets.count - 1 }

    func contains(_ bytes: UnsafeRawBufferPointer) -> Bool {
        self.storage.withUnsafeBytes { storage in
            var slot = Self.hash(bytes) & self.mask
            while true {
                let index = Int(self.slots[slot])
                if index < 0 { return false }
                let start = self.offsets[index]
                let candidate = UnsafeRawBufferPointer(rebasing: storage[start..<self.offsets[index + 1]])
                if PredicateBytes.equal(candidate, bytes) { return true }
                slot = (slot + 1) & self.mask
            }
        }
    }

    /// FNV-1a, 64-bit.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int(truncatingIfNeeded: hash ^ (hash >> 32))
    }
}
