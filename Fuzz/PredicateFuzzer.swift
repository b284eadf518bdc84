// Fuzz target `predicate`: any text either compiles into a predicate (whose canonical form compiles to
// the same expression and evaluates without crashing) or is refused with a position inside it.

func fuzzPredicate(_ bytes: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: bytes, as: UTF8.self)
    do {
        let predicate = try FilterPredicate(text, arguments: [.string("a"), .number(1)])
        let canonical = predicate.description
        let reparsed = try? FilterPredicate(canonical)
        precondition(reparsed?.description == canonical, "canonical form does not round-trip: \(canonical)")
        // Criteria of repeated characters too: the worst case of a backtracking LIKE or substring search.
        for criteria in ["", "work", "Wörk", "a*b?", "12", "\u{0301}e", String(repeating: "a", count: 2048) + "é"] {
            _ = try? predicate.evaluate(criteria)
        }
    } catch {
        precondition(error.position >= 0 && error.position <= text.utf8.count, "error position outside the text")
    }
}
