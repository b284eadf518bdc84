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

    static func contains(_ a: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        if needle.count == 0 { return true }
        if needle.count > a.count { return false }
        let first = needle[0]
        var start = 0
        let last = a.count - needle.count
        while start <= last {
            guard let found = memchr(a.baseAddress! + start, Int32(first), last - start + 1) else { return false }
            let offset = a.baseAddress!.distance(to: UnsafeRawPointer(found))
            if memcmp(a.baseAddress! + offset, needle.baseAddress!, needle.count) == 0 { return true }
            start = offset + 1
        }
        return false
    }

    /// Whole-string wildcard match: `*` any run (also empty), `?` exactly one character (scalar).
    static func like(_ text: UnsafeRawBufferPointer, _ pattern: UnsafeRawBufferPointer) -> Bool {
        var t = 0
        var p = 0
        var starPattern = -1
        var starText = 0
        while t < text.count {
            if p < pattern.count && pattern[p] == UInt8(ascii: "?") {
                t += self.scalarLength(text[t])
                p += 1
            } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
                starPattern = p
                starText = t
                p += 1
            } else if p < pattern.count && pattern[p] == text[t] {
                t += 1
                p += 1
            } else if starPattern >= 0 {
                // Let the last star swallow one more character and retry.
                starText += self.scalarLength(text[starText])
                t = starText
                p = starPattern + 1
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count && t == text.count
    }

    static func scalarLength(_ lead: UInt8) -> Int {
        lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
    }
}
