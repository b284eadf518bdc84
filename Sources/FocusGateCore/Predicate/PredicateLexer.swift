/// Splits predicate text into tokens. Keywords are case-insensitive.
struct PredicateLexer {
    enum Kind: Equatable {
        case word(String)  // identifiers and keywords, upper-cased
        case string(String)
        case number(Double)
        case symbol(String)  // operators and punctuation
        case placeholder  // %@
        case modifiers(FilterOptions)
        case end
    }

    struct Token {
        var kind: Kind
        var position: Int
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ text: String) {
        self.bytes = Array(text.utf8)
    }

    /// The next token; `.end` at the end of the text.
    mutating func next() throws(FilterPredicateError) -> Token {
        while self.index < self.bytes.count, Self.isSpace(self.bytes[self.index]) {
            self.index += 1
        }
        let start = self.index
        guard self.index < self.bytes.count else { return Token(kind: .end, position: start) }
        let byte = self.bytes[self.index]
        switch byte {
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            return Token(kind: .string(try self.string(quote: byte)), position: start)
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return Token(kind: .number(try self.number()), position: start)
        case UInt8(ascii: "-") where self.peek(1).map(Self.isDigit) == true:
            return Token(kind: .number(try self.number()), position: start)
        case _ where Self.isWordStart(byte):
            while self.index < self.bytes.count, Self.isWordPart(self.bytes[self.index]) {
                self.index += 1
            }
            let word = String(decoding: self.bytes[start..<self.index], as: UTF8.self).uppercased()
            return Token(kind: .word(word), position: start)
        case UInt8(ascii: "%"):
            self.index += 1
            switch self.peek(0) {
            case UInt8(ascii: "@"):
                self.index += 1
                return Token(kind: .placeholder, position: start)
            case UInt8(ascii: "K"):
                throw FilterPredicateError(
                    code: .keyPath, position: start,
                    message: "%K key path substitution is not supported: only SELF may be compared")
            default:
                throw FilterPredicateError(
                    code: .invalidCharacter, position: start, message: "only %@ placeholders are supported")
            }
        case UInt8(ascii: "$"):
            throw FilterPredicateError(code: .variable, position: start, message: "$variables are not supported")
        case UInt8(ascii: "@"):
            throw FilterPredicateError(
                code: .keyPath, position: start,
                message: "key paths such as @count are not supported: only SELF may be compared")
        case UInt8(ascii: "["):
            return Token(kind: .modifiers(try self.modifiers()), position: start)
        default:
            return Token(kind: .symbol(try self.symbol()), position: start)
        }
    }

    // MARK: - Token kinds

    private mutating func string(quote: UInt8) throws(FilterPredicateError) -> String {
        let start = self.index
        self.index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = self.index
        func flushRun(_ end: Int) {
            scalars.append(contentsOf: String(decoding: self.bytes[runStart..<end], as: UTF8.self).unicodeScalars)
        }
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            if byte == quote {
                flushRun(self.index)
                self.index += 1
                return String(scalars)
            }
            if byte == UInt8(ascii: "\\") {
                flushRun(self.index)
                guard let escaped = self.peek(1) else { break }
                self.index += 2
                switch escaped {
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "0"): scalars.append("\0")
                case UInt8(ascii: "u"):
                    guard self.index + 4 <= self.bytes.count,
                        let value = UInt32(
                            String(decoding: self.bytes[self.index..<self.index + 4], as: UTF8.self), radix: 16),
                        let scalar = Unicode.Scalar(value)
                    else {
                        throw FilterPredicateError(
                            code: .invalidString, position: self.index - 2,
                            message: "\\u needs four hex digits of a Unicode scalar")
                    }
                    scalars.append(scalar)
                    self.index += 4
                default:
                    // \\, \', \" and any other escaped character stand for themselves.
                    let end = self.index - 1 + Self.sequenceLength(escaped)
                    scalars.append(
                        contentsOf: String(
                            decoding: self.bytes[(self.index - 1)..<min(end, self.bytes.count)], as: UTF8.self
                        ).unicodeScalars)
                    self.index = min(end, self.bytes.count)
                }
                runStart = self.index
                continue
            }
            self.index += 1
        }
        throw FilterPredicateError(code: .invalidString, position: start, message: "string literal is not terminated")
    }

    private mutating func number() throws(FilterPredicateError) -> Double {
        let start = self.index
        if self.peek(0) == UInt8(ascii: "-") { self.index += 1 }
        while let byte = self.peek(0),
            Self.isDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
                || byte == UInt8(ascii: "E")
                || ((byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-"))
                    && (self.bytes[self.index - 1] | 0x20) == UInt8(ascii: "e"))
        {
            self.index += 1
        }
        if let next = self.peek(0), Self.isWordStart(next) {
            throw FilterPredicateError(code: .invalidNumber, position: start, message: "a number runs into letters")
        }
        guard let value = Double(String(decoding: self.bytes[start..<self.index], as: UTF8.self)), value.isFinite else {
            throw FilterPredicateError(code: .invalidNumber, position: start, message: "malformed number")
        }
        return value
    }

    private mutating func modifiers() throws(FilterPredicateError) -> FilterOptions {
        let start = self.index
        self.index += 1
        var options: FilterOptions = []
        while let byte = self.peek(0), byte != UInt8(ascii: "]") {
            switch byte | 0x20 {
            case UInt8(ascii: "c"): options.insert(.caseInsensitive)
            case UInt8(ascii: "d"): options.insert(.diacriticInsensitive)
            default:
                throw FilterPredicateError(
                    code: .modifier, position: self.index, message: "only [c], [d] and [cd] modifiers are supported")
            }
            self.index += 1
        }
        guard self.peek(0) == UInt8(ascii: "]"), !options.isEmpty else {
            throw FilterPredicateError(code: .modifier, position: start, message: "a modifier is [c], [d] or [cd]")
        }
        self.index += 1
        return options
    }

    private mutating func symbol() throws(FilterPredicateError) -> String {
        let two =
            self.index + 1 < self.bytes.count
            ? String(decoding: self.bytes[self.index...self.index + 1], as: UTF8.self) : ""
        for candidate in ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"] where two == candidate {
            self.index += 2
            return candidate
        }
        let byte = self.bytes[self.index]
        if "=<>!(){},.".utf8.contains(byte) {
            self.index += 1
            return String(UnicodeScalar(byte))
        }
        throw FilterPredicateError(code: .invalidCharacter, position: self.index, message: "unexpected character")
    }

    // MARK: - Characters

    private func peek(_ offset: Int) -> UInt8? {
        self.index + offset < self.bytes.count ? self.bytes[self.index + offset] : nil
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isWordStart(_ byte: UInt8) -> Bool {
        (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) || byte == UInt8(ascii: "_")
            || byte >= 0x80
    }

    private static func isWordPart(_ byte: UInt8) -> Bool {
        self.isWordStart(byte) || self.isDigit(byte)
    }

    private static func sequenceLength(_ lead: UInt8) -> Int {
        lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
    }
}
