import Foundation

/// How strings are prepared for comparison, for constants at compile time and for criteria at
/// evaluation time, so that all comparisons run on bytes.
///
/// - no modifier: Unicode canonical composition (NFC), so canonically equivalent strings are equal;
/// - `[d]`: canonical decomposition, combining marks removed, then NFC;
/// - `[c]`: Unicode case folding, then NFC.
///
/// ASCII text needs no normalization (and `[c]` is ASCII lower-casing), so the common case is
/// handled in place without allocating.
enum PredicateText {
    /// `text` prepared for comparisons with `options`.
    static func normalize(_ text: String, _ options: FilterOptions) -> String {
        var result = text
        if options.contains(.diacriticInsensitive) {
            var scalars = String.UnicodeScalarView()
            for scalar in result.decomposedStringWithCanonicalMapping.unicodeScalars where !self.isCombiningMark(scalar)
            {
                scalars.append(scalar)
            }
            result = String(scalars)
        }
        if options.contains(.caseInsensitive) {
            result = result.folding(options: [.caseInsensitive], locale: nil)
        }
        return result.precomposedStringWithCanonicalMapping
    }

    static func isCombiningMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Eight bytes at a time: any high bit set means non-ASCII.
        var index = 0
        let count = bytes.count
        while index + 8 <= count {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }
}

// MARK: - Byte operations

/// Comparisons on prepared UTF-8 bytes. Byte order of UTF-8 is Unicode scalar order.
enum PredicateBytes {
    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// Negative, zero or positive as `a` sorts before, equal to, or after `b`.
    static func order(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0 {
            let result = memcmp(a.baseAddress!, b.baseAddress!, common)
            if result != 0 { return Int(result) }
        }
        return a.count - b.count
    }

    static func hasPrefix(_ a: UnsafeRawBufferPointer, _ prefix: UnsafeRawBufferPointer) -> Bool {
        prefix.count <= a.count && (prefix.count == 0 || memcmp(a.baseAddress!, prefix.baseAddress!, prefix.count) == 0)
    }

    static func hasSuffix(_ a: UnsafeRawBufferPointer, _ suffix: UnsafeRawBufferPointer) -> Bool {
        suffix.count <= a.count
            && (suffix.count == 0
                || memcmp(a.baseAddress! + (a.count - suffix.count), suffix.baseAddress!, suffix.count) == 0)
    }

    /// Whether `needle` occurs in `a`: glibc's `memmem`, linear in both (the two-way algorithm), so
    /// that no needle, however repetitive, costs the criteria's length times its own.
    static func contains(_ a: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        self.firstIndex(of: needle, in: a, from: 0, to: a.count) != nil
    }

    /// Where `needle` first occurs in `text[from..<to]`, or `nil`.
    static func firstIndex(
        of needle: UnsafeRawBufferPointer, in text: UnsafeRawBufferPointer, from: Int, to: Int
    ) -> Int? {
        if needle.count == 0 { return from }
        guard to - from >= needle.count, let base = text.baseAddress else { return nil }
        guard let found = searchBytes(base + from, to - from, needle.baseAddress!, needle.count) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// Whole-string wildcard match: `*` any run (also empty), `?` exactly one character (scalar).
    /// `nil` when deciding would take more than `budget` steps (the steps taken are subtracted).
    ///
    /// The pattern is pieces between stars: the first must match at the start of `text`, the last
    /// at its end, and each one between at its leftmost place after the piece before, which leaves
    /// the most room for the rest (a piece covers a fixed number of characters). A piece without
    /// `?` is found by ``firstIndex(of:in:from:to:)``, linear in the text; one with `?` is tried at
    /// each character, which is what the budget bounds.
    static func like(_ text: UnsafeRawBufferPointer, _ pattern: UnsafeRawBufferPointer, budget: inout Int) -> Bool? {
        let star = UInt8(ascii: "*")
        guard let firstStar = pattern.firstIndex(of: star) else {
            guard let end = self.match(pattern, 0..<pattern.count, in: text, at: 0, limit: text.count, budget: &budget)
            else { return budget < 0 ? nil : false }
            return end == text.count
        }
        let lastStar = pattern.lastIndex(of: star)!
        guard let prefixEnd = self.match(pattern, 0..<firstStar, in: text, at: 0, limit: text.count, budget: &budget),
            let suffixStart = self.matchBackward(pattern, (lastStar + 1)..<pattern.count, in: text, budget: &budget),
            prefixEnd <= suffixStart
        else { return budget < 0 ? nil : false }
        var position = prefixEnd
        var pieceStart = firstStar + 1
        while pieceStart < lastStar {
            var pieceEnd = pieceStart
            while pieceEnd < lastStar && pattern[pieceEnd] != star { pieceEnd += 1 }
            if pieceEnd > pieceStart {
                guard
                    let end = self.find(
                        pattern, pieceStart..<pieceEnd, in: text, from: position, limit: suffixStart, budget: &budget)
                else { return budget < 0 ? nil : false }
                position = end
            }
            pieceStart = pieceEnd + 1
        }
        return true
    }

    /// Where the leftmost match of `pattern[piece]` in `text[from..<limit]` ends, or `nil`.
    private static func find(
        _ pattern: UnsafeRawBufferPointer, _ piece: Range<Int>, in text: UnsafeRawBufferPointer, from: Int,
        limit: Int, budget: inout Int
    ) -> Int? {
        let literal = UnsafeRawBufferPointer(rebasing: pattern[piece])
        if !literal.contains(UInt8(ascii: "?")) {
            budget -= limit - from + piece.count
            guard budget >= 0 else { return nil }
            return self.firstIndex(of: literal, in: text, from: from, to: limit).map { $0 + piece.count }
        }
        var start = from
        while start < limit {
            if let end = self.match(pattern, piece, in: text, at: start, limit: limit, budget: &budget) { return end }
            guard budget >= 0 else { return nil }
            start += self.scalarLength(text[start])
        }
        return nil
    }

    /// Where `pattern[piece]` (no `*`) matched from `start` ends, or `nil`.
    private static func match(
        _ pattern: UnsafeRawBufferPointer, _ piece: Range<Int>, in text: UnsafeRawBufferPointer, at start: Int,
        limit: Int, budget: inout Int
    ) -> Int? {
        var t = start
        for p in piece {
            budget -= 1
            guard budget >= 0, t < limit else { return nil }
            if pattern[p] == UInt8(ascii: "?") {
                t += self.scalarLength(text[t])
                if t > limit { return nil }
            } else if pattern[p] == text[t] {
                t += 1
            } else {
                return nil
            }
        }
        return t
    }

    /// Where `pattern[piece]` (no `*`) must start to end at the end of `text`, or `nil`.
    private static func matchBackward(
        _ pattern: UnsafeRawBufferPointer, _ piece: Range<Int>, in text: UnsafeRawBufferPointer, budget: inout Int
    ) -> Int? {
        var t = text.count
        for p in piece.reversed() {
            budget -= 1
            guard budget >= 0, t > 0 else { return nil }
            if pattern[p] == UInt8(ascii: "?") {
                // One character back: past its continuation bytes to its lead byte.
                t -= 1
                while t > 0 && text[t] & 0xC0 == 0x80 { t -= 1 }
            } else if pattern[p] == text[t - 1] {
                t -= 1
            } else {
                return nil
            }
        }
        return t
    }

    static func scalarLength(_ lead: UInt8) -> Int {
        lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
    }
}

#if canImport(Glibc)
    import Glibc

    /// glibc's `memmem` (the two-way algorithm: linear in the text and the needle), which the Glibc
    /// module does not declare (it needs `_GNU_SOURCE`): found once by its name in the C library.
    private nonisolated(unsafe) let searchBytes = unsafeBitCast(
        dlsym(nil, "memmem"),
        to: (@convention(c) (UnsafeRawPointer?, Int, UnsafeRawPointer?, Int) -> UnsafeMutableRawPointer?).self)
#else
    private func searchBytes(_ text: UnsafeRawPointer, _ count: Int, _ needle: UnsafeRawPointer, _ needleCount: Int)
        -> UnsafeMutableRawPointer?
    {
        memmem(text, count, needle, needleCount)
    }
#endif
