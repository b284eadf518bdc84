/// The ids of a user's most recent notifications, to recognise a duplicate (SPEC §6).
///
/// The window is a count, not a time span, so that replaying the same input after a restart
/// makes the same decisions. Ids are kept as 64-bit FNV-1a hashes of their UTF-8 bytes: 8 bytes an
/// id, stable across processes, and a lookup compares integers. Two different ids of one user
/// collide with a probability of about `capacity / 2^64` per notification.
public struct DedupeWindow: Sendable, Hashable {
    /// Ids remembered; the oldest is forgotten first.
    public let capacity: Int
    private(set) var hashes: [UInt64] = []
    /// Where the next id goes once the window is full.
    private var next = 0

    /// Creates an empty window.
    public init(capacity: Int) {
        precondition(capacity > 0, "the dedupe window must hold at least one id")
        self.capacity = capacity
    }

    /// Ids currently remembered.
    public var count: Int { self.hashes.count }

    /// Whether `id` is in the window.
    public func contains(_ id: String) -> Bool {
        self.hashes.contains(Self.hash(id))
    }

    /// Remembers `id`, forgetting the oldest id when the window is full.
    public mutating func insert(_ id: String) {
        let hash = Self.hash(id)
        if self.hashes.count < self.capacity {
            self.hashes.append(hash)
        } else {
            self.hashes[self.next] = hash
            self.next = (self.next + 1) % self.capacity
        }
    }

    /// The stable hash of an id.
    static func hash(_ id: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    // MARK: - Compact form

    /// Calls `body` with each hash, oldest first, without building an array.
    func forEachHashOldestFirst(_ body: (UInt64) -> Void) {
        let start = self.hashes.count == self.capacity ? self.next : 0
        for index in self.hashes.indices[start...] { body(self.hashes[index]) }
        for index in self.hashes.indices[..<start] { body(self.hashes[index]) }
    }

    /// A window holding `hashes` (oldest first); keeps the newest `capacity` of them.
    init(capacity: Int, hashesOldestFirst hashes: [UInt64]) {
        self.init(capacity: capacity)
        self.hashes = Array(hashes.suffix(capacity))
    }
}
