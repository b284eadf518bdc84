/// What an unread notification is counted by when a context changes (its filter criteria and
/// its sender) and the thread a summary counts it in. Any may be absent.
struct EntryAttributes: Hashable {
    var criteria: String?
    var sender: String?
    var thread: String? = nil

    static let none = EntryAttributes(criteria: nil, sender: nil)

    var isNone: Bool { self.criteria == nil && self.sender == nil && self.thread == nil }
}

/// What a summary lists of a silenced notification (docs/focus-schedules.md, Summaries), read
/// from its ``DecisionRecord``.
struct SilencedItem: Hashable {
    var id: String
    /// The input record's offset in its partition (`focusgate-source`); `-1`: not known.
    var sourceOffset: Int64
    /// The Focus in force when it was silenced; `nil`: none was (a rate limit silenced it).
    var focus: String?
}

/// The distinct attributes (criteria and sender) of a partition's remembered notifications, each
/// kept once and named by a number (index + 1; `0` is "neither").
///
/// The pool only grows between collections: attributes that no entry uses any more stay until
/// ``collect(keeping:)`` rebuilds the pool from the numbers still in use. The owner collects when
/// the pool has doubled since the last collection, so interning costs amortised constant time
/// whether attributes repeat (the pool stays small) or never do (the pool tracks the entries).
struct AttributePool {
    private(set) var values: [EntryAttributes] = []
    private var numbers: [EntryAttributes: UInt32] = [:]
    /// The pool's size after the last collection.
    private(set) var sizeAfterCollection = 0

    var count: Int { self.values.count }

    /// The number of `attributes`, adding them when new; `0` for none.
    mutating func intern(_ attributes: EntryAttributes) -> UInt32 {
        guard !attributes.isNone else { return 0 }
        if let number = self.numbers[attributes] { return number }
        self.values.append(attributes)
        let number = UInt32(self.values.count)
        self.numbers[attributes] = number
        return number
    }

    /// The attributes of a number from ``intern(_:)``.
    subscript(number: UInt32) -> EntryAttributes {
        number == 0 ? .none : self.values[Int(number) - 1]
    }

    /// Whether a collection would pay: the pool has doubled since the last one.
    var needsCollection: Bool {
        self.values.count >= 1024 && self.values.count >= 2 * self.sizeAfterCollection
    }

    /// What breaks the pool's invariants (empty when they hold): each value kept once, under
    /// its number, and never "neither".
    var violations: [String] {
        var found: [String] = []
        if self.numbers.count != self.values.count {
            found.append("\(self.values.count) values but \(self.numbers.count) numbers")
        }
        for (index, value) in self.values.enumerated() {
            if value.isNone { found.append("number \(index + 1) holds neither criteria nor sender") }
            if self.numbers[value] != UInt32(index + 1) {
                found.append("number \(index + 1) is found as \(self.numbers[value].map(String.init) ?? "nothing")")
            }
        }
        if self.sizeAfterCollection > self.values.count {
            found.append("size after collection \(self.sizeAfterCollection) above the size \(self.values.count)")
        }
        return found
    }

    /// Keeps only the numbers `used` marks (indexed by number), renumbering them; returns the
    /// new number of each old one (`0` for dropped ones).
    mutating func collect(keeping used: [Bool]) -> [UInt32] {
        var renumbered = [UInt32](repeating: 0, count: self.values.count + 1)
        var kept: [EntryAttributes] = []
        var numbers: [EntryAttributes: UInt32] = [:]
        for (index, attributes) in self.values.enumerated() where used[index + 1] {
            kept.append(attributes)
            renumbered[index + 1] = UInt32(kept.count)
            numbers[attributes] = UInt32(kept.count)
        }
        self.values = kept
        self.numbers = numbers
        self.sizeAfterCollection = kept.count
        return renumbered
    }
}
