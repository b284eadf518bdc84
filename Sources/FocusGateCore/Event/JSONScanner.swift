import Foundation

/// A validating, allocation-free JSON scanner over a byte buffer (RFC 8259, UTF-8 only).
///
/// It walks values without building them: callers read the members they care about and skip
/// the rest, which is still fully validated (grammar, UTF-8, escapes, nesting depth).
struct JSONScanner {
    /// A string's bytes between its quotes, not yet unescaped.
    struct StringToken {
        var start: Int
        var end: Int
        var hasEscapes: Bool
    }

    private let base: UnsafePointer<UInt8>
    private let count: Int
    private(set) var index = 0
    let maxDepth: Int

    init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        // An empty buffer may have no base address; point at a static byte instead.
        self.base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? Self.emptyBase
        self.count = bytes.count
        self.maxDepth = maxDepth
    }

    // Never written after creation and never read past `count` (zero), so sharing it is safe.
    nonisolated(unsafe) private static let emptyBase: UnsafePointer<UInt8> = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    // MARK: - Structure

    var isAtEnd: Bool { self.index >= self.count }

    /// The next non-whitespace byte, without consuming it; `nil` at the end.
    mutating func peek() -> UInt8? {
        self.skipWhitespace()
        return self.index < self.count ? self.base[self.index] : nil
    }

    mutating func skipWhitespace() {
        while self.index < self.count {
            switch self.base[self.index] {
            case 0x20, 0x0A, 0x0D, 0x09: self.index += 1
            default: return
            }
        }
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard self.peek() == byte else { return false }
        self.index += 1
        return true
    }

    mutating func expect(_ byte: UInt8, _ what: StaticString) throws(EventDecodingError) {
        guard self.consume(byte) else { throw self.invalid("expected \(what)") }
    }

    /// Iterates an object's members: `body` receives each key with the scanner positioned at its
    /// value, and must consume the value.
    mutating func forEachMember(
        depth: Int,
        _ body: (inout JSONScanner, StringToken) throws(EventDecodingError) -> Void
    ) throws(EventDecodingError) {
        guard depth <= self.maxDepth else { throw self.invalid("nesting deeper than \(self.maxDepth)") }
        try self.expect(UInt8(ascii: "{"), "{")
        if self.consume(UInt8(ascii: "}")) { return }
        repeat {
            guard self.peek() == UInt8(ascii: "\"") else { throw self.invalid("expected a member name") }
            let key = try self.scanString()
            try self.expect(UInt8(ascii: ":"), ":")
            try body(&self, key)
        } while self.consume(UInt8(ascii: ","))
        try self.expect(UInt8(ascii: "}"), ", or }")
    }

    /// Iterates an array's elements: `body` runs with the scanner positioned at each element and must consume it.
    mutating func forEachElement(
        depth: Int,
        _ body: (inout JSONScanner) throws(EventDecodingError) -> Void
    ) throws(EventDecodingError) {
        guard depth <= self.maxDepth else { throw self.invalid("nesting deeper than \(self.maxDepth)") }
        try self.expect(UInt8(ascii: "["), "[")
        if self.consume(UInt8(ascii: "]")) { return }
        repeat {
            try body(&self)
        } while self.consume(UInt8(ascii: ","))
        try self.expect(UInt8(ascii: "]"), ", or ]")
    }

    /// Validates and skips any value.
    mutating func skipValue(depth: Int) throws(EventDecodingError) {
        guard let next = self.peek() else { throw self.invalid("unexpected end") }
        switch next {
        case UInt8(ascii: "\""):
            _ = try self.scanString()
        case UInt8(ascii: "{"):
            try self.forEachMember(depth: depth + 1) { (scanner, _) throws(EventDecodingError) in
                try scanner.skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            try self.forEachElement(depth: depth + 1) { (scanner) throws(EventDecodingError) in
                try scanner.skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "t"):
            try self.literal("true")
        case UInt8(ascii: "f"):
            try self.literal("false")
        case UInt8(ascii: "n"):
            try self.literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try self.skipNumber()
        default:
            throw self.invalid("unexpected byte")
        }
    }

    private mutating func literal(_ word: StaticString) throws(EventDecodingError) {
        let length = word.utf8CodeUnitCount
        guard self.index + length <= self.count, memcmp(self.base + self.index, word.utf8Start, length) == 0 else {
            throw self.invalid("invalid literal")
        }
        self.index += length
    }

    // MARK: - Strings

    /// Scans a string at the current position (which must be its opening quote), validating UTF-8 and escapes.
    mutating func scanString() throws(EventDecodingError) -> StringToken {
        self.index += 1
        let start = self.index
        var hasEscapes = false
        while self.index < self.count {
            // Eight plain bytes at a time: none is a quote, backslash, control byte or non-ASCII.
            // A word that holds one moves straight to the first such byte.
            while self.index + 8 <= self.count {
                let word = UnsafeRawPointer(self.base + self.index).loadUnaligned(as: UInt64.self)
                let attention = Self.attention(UInt64(littleEndian: word))
                if attention != 0 {
                    self.index += attention.trailingZeroBitCount >> 3
                    break
                }
                self.index += 8
            }
            guard self.index < self.count else { break }
            let byte = self.base[self.index]
            if byte == UInt8(ascii: "\"") {
                let token = StringToken(start: start, end: self.index, hasEscapes: hasEscapes)
                self.index += 1
                return token
            } else if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                try self.skipEscape()
            } else if byte < 0x20 {
                throw self.invalid("control character in string")
            } else if byte < 0x80 {
                self.index += 1
            } else {
                try self.skipMultiByteScalar()
            }
        }
        throw self.invalid("unterminated string")
    }

    /// The bytes of `word` (first byte lowest) that are `"`, `\\`, below 0x20 or at least 0x80,
    /// SWAR: each such byte's high bit is set. Bytes after the first such one may be set too (a
    /// borrow carries upwards), but the lowest set bit is always the first such byte's.
    @inline(__always)
    static func attention(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func zeroBytes(_ value: UInt64) -> UInt64 { (value &- ones) & ~value & highs }
        let control = (word &- 0x2020_2020_2020_2020) & ~word & highs
        let quote = zeroBytes(word ^ 0x2222_2222_2222_2222)
        let backslash = zeroBytes(word ^ 0x5C5C_5C5C_5C5C_5C5C)
        return (word & highs) | control | quote | backslash
    }

    private mutating func skipEscape() throws(EventDecodingError) {
        guard self.index + 1 < self.count else { throw self.invalid("unterminated escape") }
        switch self.base[self.index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            self.index += 2
        case UInt8(ascii: "u"):
            let unit = try self.hexUnit(at: self.index + 2)
            self.index += 6
            if unit >= 0xD800 && unit < 0xDC00 {
                // A high surrogate must be followed by an escaped low surrogate.
                guard self.index + 1 < self.count, self.base[self.index] == UInt8(ascii: "\\"),
                    self.base[self.index + 1] == UInt8(ascii: "u")
                else { throw self.invalid("unpaired surrogate escape") }
                let low = try self.hexUnit(at: self.index + 2)
                guard low >= 0xDC00 && low < 0xE000 else { throw self.invalid("unpaired surrogate escape") }
                self.index += 6
            } else if unit >= 0xDC00 && unit < 0xE000 {
                throw self.invalid("unpaired surrogate escape")
            }
        default:
            throw self.invalid("invalid escape")
        }
    }

    private func hexUnit(at position: Int) throws(EventDecodingError) -> UInt32 {
        guard position + 4 <= self.count else { throw self.invalid("short \\u escape") }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = self.base[position + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw self.invalid("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Validates one multi-byte UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF).
    private mutating func skipMultiByteScalar() throws(EventDecodingError) {
        let lead = self.base[self.index]
        let length: Int
        var lowerBound: UInt8 = 0x80
        var upperBound: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lowerBound = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upperBound = 0x9F
        case 0xF0: length = 4; lowerBound = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upperBound = 0x8F
        default: throw self.invalid("invalid UTF-8")
        }
        guard self.index + length <= self.count else { throw self.invalid("invalid UTF-8") }
        let second = self.base[self.index + 1]
        guard second >= lowerBound && second <= upperBound else { throw self.invalid("invalid UTF-8") }
        for offset in 2..<length where self.base[self.index + offset] & 0xC0 != 0x80 {
            throw self.invalid("invalid UTF-8")
        }
        self.index += length
    }

    /// The string's value. Without escapes this is one copy of validated UTF-8.
    func string(_ token: StringToken) -> String {
        let bytes = UnsafeBufferPointer(start: self.base + token.start, count: token.end - token.start)
        guard token.hasEscapes else { return String(decoding: bytes, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var position = token.start
        while position < token.end {
            let byte = self.base[position]
            guard byte == UInt8(ascii: "\\") else {
                let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
                scalars.append(
                    contentsOf: String(
                        decoding: UnsafeBufferPointer(start: self.base + position, count: length), as: UTF8.self
                    ).unicodeScalars)
                position += length
                continue
            }
            let escaped = self.base[position + 1]
            position += 2
            switch escaped {
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                // Validated by scanString: a BMP scalar or a surrogate pair.
                var value = (try? self.hexUnit(at: position)) ?? 0xFFFD
                position += 4
                if value >= 0xD800 && value < 0xDC00 {
                    let low = (try? self.hexUnit(at: position + 2)) ?? 0xDC00
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    position += 6
                }
                scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
            default: scalars.append(Unicode.Scalar(escaped))
            }
        }
        return String(scalars)
    }

    /// Calls `body` with the token's raw bytes (its value when it has no escapes).
    func withBytes<R>(_ token: StringToken, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: self.base + token.start, count: token.end - token.start))
    }

    /// Whether the token's raw bytes are exactly `literal` (member names are compared this way).
    func equals(_ token: StringToken, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        return !token.hasEscapes && token.end - token.start == length
            && memcmp(self.base + token.start, literal.utf8Start, length) == 0
    }

    /// Whether the token's value equals `bytes` (e.g. the Kafka key).
    func equals(_ token: StringToken, _ bytes: UnsafeRawBufferPointer) -> Bool {
        if token.hasEscapes {
            return Array(self.string(token).utf8).withUnsafeBytes { PredicateBytes.equal($0, bytes) }
        }
        return PredicateBytes.equal(
            UnsafeRawBufferPointer(start: self.base + token.start, count: token.end - token.start), bytes)
    }

    // MARK: - Numbers

    /// Scans a number, validating its grammar; returns its value.
    mutating func scanNumber() throws(EventDecodingError) -> Double {
        let start = self.index
        try self.skipNumber()
        let length = self.index - start
        if let exact = self.simpleDecimal(start: start, end: self.index) {
            return exact
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer in
            for offset in 0..<length { buffer[offset] = CChar(bitPattern: self.base[start + offset]) }
            buffer[length] = 0
            return strtod(buffer.baseAddress!, nil)
        }
    }

    /// Clinger's fast path: up to 15 significant digits and no exponent convert exactly with one
    /// correctly rounded division, so `strtod` is only needed for other numbers.
    private func simpleDecimal(start: Int, end: Int) -> Double? {
        var index = start
        let negative = self.base[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var inFraction = false
        while index < end {
            let byte = self.base[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if self.isDigit(byte) {
                mantissa = mantissa &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
                digits += 1
                if inFraction { fractionDigits += 1 }
            } else {
                return nil  // exponent
            }
            index += 1
        }
        guard digits <= 15 else { return nil }
        let powers: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]
        let value = Double(mantissa) / powers[fractionDigits]
        return negative ? -value : value
    }

    /// Validates and skips a number.
    mutating func skipNumber() throws(EventDecodingError) {
        if self.index < self.count && self.base[self.index] == UInt8(ascii: "-") { self.index += 1 }
        guard self.index < self.count, self.isDigit(self.base[self.index]) else { throw self.invalid("invalid number") }
        if self.base[self.index] == UInt8(ascii: "0") {
            self.index += 1
        } else {
            while self.index < self.count && self.isDigit(self.base[self.index]) { self.index += 1 }
        }
        if self.index < self.count && self.base[self.index] == UInt8(ascii: ".") {
            self.index += 1
            guard self.index < self.count, self.isDigit(self.base[self.index]) else {
                throw self.invalid("invalid number")
            }
            while self.index < self.count && self.isDigit(self.base[self.index]) { self.index += 1 }
        }
        if self.index < self.count && (self.base[self.index] | 0x20) == UInt8(ascii: "e") {
            self.index += 1
            if self.index < self.count
                && (self.base[self.index] == UInt8(ascii: "+") || self.base[self.index] == UInt8(ascii: "-"))
            {
                self.index += 1
            }
            guard self.index < self.count, self.isDigit(self.base[self.index]) else {
                throw self.invalid("invalid number")
            }
            while self.index < self.count && self.isDigit(self.base[self.index]) { self.index += 1 }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    // MARK: - Errors

    func invalid(_ reason: String) -> EventDecodingError {
        EventDecodingError(code: .invalidJSON, detail: "\(reason) at byte \(self.index)")
    }
}
