/// The distinct filter criteria of a partition's unread notifications, each kept once and named
/// by a number (index + 1; `0` is "no criteria").
///
/// The pool only grows between collections: a string that no entry uses any more stays until
/// ``collect(keeping:)`` rebuilds the pool from the numbers still in use. The owner collects when
/// the pool has doubled since the last collection, so interning costs amortised constant time
/// whether criteria repeat (the pool stays small) or never do (the pool tracks the entries).
struct CriteriaPool {
    private(set) var strings: [String] = []
    private var numbers: [String: UInt32] = [:]
    /// The pool's size after the last collection.
    private(set) var sizeAfterCollection = 0

    var count: Int { self.strings.count }

    /// The number of `criteria`, adding it when new; `0` for `nil`.
    mutating func intern(_ criteria: String?) -> UInt32 {
        guard let criteria else { return 0 }
        if let number = self.numbers[criteria] { return number }
        self.strings.append(criteria)
        let number = UInt32(self.strings.count)
        self.numbers[criteria] = number
        return number
    }

    /// The criteria of a number from ``intern(_:)``.
    func string(_ number: UInt32) -> String? {
        number == 0 ? nil : self.strings[Int(number) - 1]
    }

    /// Whether a collection would pay: the pool has doubled since the last one.
    var needsCollection: Bool {
        self.strings.count >= 1024 && self.strings.count >= 2 * self.sizeAfterCollection
    }

    /// Keeps only the numbers `used` marks (indexed by number), renumbering them; returns the
    /// new number of each old one (`0` for dropped ones).
    mutating func collect(keeping used: [Bool]) -> [UInt32] {
        var renumbered = [UInt32](repeating: 0, count: self.strings.count + 1)
        var kept: [String] = []
        var numbers: [String: UInt32] = [:]
        for (index, string) in self.strings.enumerated() where used[index + 1] {
            kept.append(string)
            renumbered[index + 1] = UInt32(kept.count)
            numbers[string] = UInt32(kept.count)
        }
        self.strings = kept
        self.numbers = numbers
        self.sizeAfterCollection = kept.count
        return renumbered
    }
}
