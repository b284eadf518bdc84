// MARK: - Writing a record's bytes through a pointer

/// Writes bytes through a pointer into room made for them: a changelog record is encoded with
/// one append to its buffer instead of a capacity and uniqueness check per byte.
struct ByteCursor {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// Bytes written so far.
    private(set) var count = 0

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    mutating func write(_ byte: UInt8) {
        precondition(self.count < self.capacity, "a record outgrew the room made for it")
        self.base[self.count] = byte
        self.count += 1
    }

    /// An unsigned LEB128 varint, as ``PartitionState/writeVarint(_:to:)`` writes it.
    mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            self.write(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        self.write(UInt8(truncatingIfNeeded: value))
    }

    /// Eight bytes, least significant first.
    mutating func writeLittleEndian(_ value: UInt64) {
        precondition(self.capacity - self.count >= 8, "a record outgrew the room made for it")
        UnsafeMutableRawPointer(self.base + self.count).storeBytes(of: value.littleEndian, as: UInt64.self)
        self.count += 8
    }
}

extension Array where Element == UInt8 {
    /// Appends what `body` writes, at most `maxCount` bytes, through a ``ByteCursor`` over
    /// scratch space (on the stack when it is small): one copy into the array.
    mutating func appendBytes(atMost maxCount: Int, _ body: (inout ByteCursor) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxCount) { scratch in
            var cursor = ByteCursor(base: scratch.baseAddress!, capacity: maxCount)
            body(&cursor)
            self.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<cursor.count]))
        }
    }
}
