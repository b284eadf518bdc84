// MARK: - Writing bytes into space sized beforehand

extension Array where Element == UInt8 {
    /// Appends what `body` writes through a ``BoundedWriter``, at most `bound` bytes: the space
    /// is made once, the writes are stores (no capacity or uniqueness check per byte), and what
    /// `body` did not use is dropped.
    mutating func appendBounded(_ bound: Int, _ body: (inout BoundedWriter) -> Void) {
        let start = self.count
        self.append(contentsOf: repeatElement(0, count: bound))
        let written = self.withUnsafeMutableBufferPointer { buffer in
            var writer = BoundedWriter(buffer: UnsafeMutableBufferPointer(rebasing: buffer[start...]))
            body(&writer)
            return writer.count
        }
        self.removeLast(bound - written)
    }
}

/// Writes into a buffer sized beforehand; every write checks that it fits (a bound computed
/// wrong stops the process rather than write past the buffer).
struct BoundedWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    /// The most bytes ``string(_:)`` writes for `value`: quotes, and six per byte escaped as `\u00XX`.
    static func stringBound(_ value: String) -> Int { value.utf8.count * 6 + 2 }
    /// The most bytes ``integer(_:)`` writes.
    static let integerBound = 20
    /// The bytes ``timestamp(milliseconds:)`` writes.
    static let timestampBound = 24

    mutating func byte(_ byte: UInt8) {
        precondition(self.count < self.buffer.count, "BoundedWriter: bound too small")
        self.buffer[self.count] = byte
        self.count += 1
    }

    mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(self.count + bytes.count <= self.buffer.count, "BoundedWriter: bound too small")
        guard let source = bytes.baseAddress else { return }
        (self.buffer.baseAddress! + self.count).update(from: source, count: bytes.count)
        self.count += bytes.count
    }

    mutating func raw(_ text: StaticString) {
        self.bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` as a JSON string (RFC 8259 escaping), quotes included.
    mutating func string(_ value: String) {
        self.byte(UInt8(ascii: "\""))
        // Most values (ids, app ids, Focus names) need no escaping: copied in one go.
        let copied = value.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where Self.needsEscape(byte) { return false }
            self.bytes(utf8)
            return true
        }
        if copied != true {
            for byte in value.utf8 { self.escaped(byte) }
        }
        self.byte(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func escaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): self.raw("\\\"")
        case UInt8(ascii: "\\"): self.raw("\\\\")
        case 0x0A: self.raw("\\n")
        case 0x0D: self.raw("\\r")
        case 0x09: self.raw("\\t")
        case 0..<0x20:
            let hex: StaticString = "0123456789abcdef"
            self.raw("\\u00")
            self.byte(hex.utf8Start[Int(byte >> 4)])
            self.byte(hex.utf8Start[Int(byte & 0xF)])
        default: self.byte(byte)
        }
    }

    /// The decimal digits of `value`, with a leading `-` when negative.
    mutating func integer(_ value: Int64) {
        var magnitude = value.magnitude
        var digits = 0
        repeat {
            digits += 1
            magnitude /= 10
        } while magnitude > 0
        let width = digits + (value < 0 ? 1 : 0)
        precondition(self.count + width <= self.buffer.count, "BoundedWriter: bound too small")
        if value < 0 { self.buffer[self.count] = UInt8(ascii: "-") }
        magnitude = value.magnitude
        for place in stride(from: self.count + width - 1, through: self.count + width - digits, by: -1) {
            self.buffer[place] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        }
        self.count += width
    }

    /// The instants RFC 3339 can write (four-digit years): `0000-01-01T00:00:00.000Z` through
    /// `9999-12-31T23:59:59.999Z`.
    static let timestampRange: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` for Unix milliseconds; an instant outside ``timestampRange``
    /// is written as the nearest end of it.
    mutating func timestamp(milliseconds unclamped: Int64) {
        let milliseconds = min(max(unclamped, Self.timestampRange.lowerBound), Self.timestampRange.upperBound)
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millis = Int(milliseconds - seconds * 1000)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        self.digits(Int(year), width: 4)
        self.byte(UInt8(ascii: "-"))
        self.digits(month, width: 2)
        self.byte(UInt8(ascii: "-"))
        self.digits(day, width: 2)
        self.byte(UInt8(ascii: "T"))
        self.digits(secondOfDay / 3600, width: 2)
        self.byte(UInt8(ascii: ":"))
        self.digits(secondOfDay / 60 % 60, width: 2)
        self.byte(UInt8(ascii: ":"))
        self.digits(secondOfDay % 60, width: 2)
        self.byte(UInt8(ascii: "."))
        self.digits(millis, width: 3)
        self.byte(UInt8(ascii: "Z"))
    }

    /// `value` (0 ≤ value < 10^width) in exactly `width` digits, zeros first.
    private mutating func digits(_ value: Int, width: Int) {
        precondition(self.count + width <= self.buffer.count, "BoundedWriter: bound too small")
        var value = value
        for place in stride(from: self.count + width - 1, through: self.count, by: -1) {
            self.buffer[place] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10)
            value /= 10
        }
        self.count += width
    }
}
