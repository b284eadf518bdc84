/// Where each of a set of identifiers is kept, found by a hash its caller computes once: a
/// worker hashes a record's user id once (``hash(_:)``) and finds the user with it both in the
/// context cache and in the partition state, where a `Dictionary<String, _>` would hash the id
/// again for each (and pay its hasher's set-up and finalization per lookup).
///
/// Numbers in open-addressing slots (``HashSlots``), each beside 32 bits of its identifier's
/// hash; the identifiers themselves stay with the caller (the cache's slots, the state's user
/// ids), which passes them to ``find(_:hash:key:)`` and keeps the index in step: a number is
/// inserted while its identifier is not in the index, and removed with the hash it was inserted
/// with.
///
/// Identifiers are hashed and compared by their UTF-8 bytes, as ``UserID`` is (and as Kafka and
/// the stores compare user ids), never by Unicode canonical equivalence as `String`'s `==` is: two
/// spellings of one text are two identifiers. The hash is Swift's `Hasher`: seeded per process,
/// so identifiers chosen to collide in one process do not in another.
///
/// Invariants (``violations(key:)``): those of ``HashSlots``, with each slot's hash its
/// identifier's.
public struct IdentifierIndex: Sendable {
    private var storage: HashSlots

    /// An empty index of at least `capacity` slots.
    public init(capacity: Int = 16) {
        var size = 2
        while size < capacity { size *= 2 }
        self.storage = HashSlots(capacity: size)
    }

    /// Numbers held.
    public var count: Int { self.storage.count }

    /// The hash ``find(_:hash:key:)``, ``insert(_:hash:)`` and ``remove(_:hash:)`` take for
    /// `identifier`: the hash of its UTF-8 bytes, seeded per process.
    public static func hash(_ identifier: String) -> UInt64 {
        var hasher = Hasher()
        UserID.hashBytes(of: identifier, into: &hasher)
        return UInt64(UInt(bitPattern: hasher.finalize()))
    }

    /// The number stored for `identifier` (whose ``hash(_:)`` is `hash`), if any; `key` gives
    /// the identifier of a stored number, read only for a number whose stored hash matches.
    public func find(_ identifier: String, hash: UInt64, key: (UInt32) -> String) -> UInt32? {
        self.storage.find(hash: UInt32(truncatingIfNeeded: hash)) { UserID.sameBytes(key($0), identifier) }
    }

    /// Adds `number` for an identifier with hash `hash` that the index does not hold yet.
    public mutating func insert(_ number: UInt32, hash: UInt64) {
        self.storage.insert(number, hash: UInt32(truncatingIfNeeded: hash))
    }

    /// Removes `number`, inserted with `hash`; `false` when the index does not hold it.
    @discardableResult
    public mutating func remove(_ number: UInt32, hash: UInt64) -> Bool {
        self.storage.remove(number, hash: UInt32(truncatingIfNeeded: hash))
    }

    /// What breaks the invariants (see the type's documentation), given each stored number's
    /// identifier (`nil`: the caller has no such number); empty when none does.
    public func violations(key: (UInt32) -> String?) -> [String] {
        self.storage.violations { number in key(number).map { UInt32(truncatingIfNeeded: Self.hash($0)) } }
    }
}
