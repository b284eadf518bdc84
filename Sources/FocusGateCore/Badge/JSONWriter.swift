/// Writes JSON documents of varying shape (summaries) straight to bytes, RFC 8259 escaping; records
/// of a fixed layout (badge updates, status) write through ``BoundedWriter`` in one pass.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    /// A writer that appends to `storage` (emptied, its capacity kept): no allocation once it has grown.
    init(storage: consuming [UInt8]) {
        storage.removeAll(keepingCapacity: true)
        self.bytes = storage
    }

    /// Hands the written bytes back, for reuse.
    consuming func finish() -> [UInt8] {
        self.bytes
    }

    /// Writes one JSON object into `bytes` (replacing what it held, reusing its capacity).
    static func writeObject(into bytes: inout [UInt8], _ members: (inout JSONWriter) -> Void) {
        var storage: [UInt8] = []
        swap(&storage, &bytes)
        var json = JSONWriter(storage: consume storage)
        json.beginObject()
        members(&json)
        json.endObject()
        bytes = json.finish()
    }

    mutating func beginObject() {
        self.bytes.append(UInt8(ascii: "{"))
        self.needsComma = false
    }

    mutating func endObject() {
        self.bytes.append(UInt8(ascii: "}"))
    }

    mutating func member(_ name: StaticString, string value: String?) {
        self.name(name)
        guard let value else { return self.bytes.append(contentsOf: "null".utf8) }
        self.string(value)
    }

    mutating func member(_ name: StaticString, integer value: Int64?) {
        self.name(name)
        guard let value else { return self.bytes.append(contentsOf: "null".utf8) }
        DecimalText.append(value, to: &self.bytes)
    }

    /// A number with at most `decimals` digits after the point (trailing zeros dropped).
    mutating func member(_ name: StaticString, number value: Double, decimals: Int) {
        self.name(name)
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        if scaled < 0 { self.bytes.append(UInt8(ascii: "-")) }
        DecimalText.append(Int64(scaled.magnitude) / scale, to: &self.bytes)
        var fraction = Int64(scaled.magnitude) % scale
        guard fraction != 0 else { return }
        var width = decimals
        while fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        var digits = [UInt8](repeating: UInt8(ascii: "0"), count: width + 1)
        digits[0] = UInt8(ascii: ".")
        for place in stride(from: width, to: 0, by: -1) {
            digits[place] = UInt8(ascii: "0") + UInt8(fraction % 10)
            fraction /= 10
        }
        self.bytes.append(contentsOf: digits)
    }

    /// An array member whose elements `elements` writes (``element(_:)``).
    mutating func member(_ name: StaticString, array elements: (inout JSONWriter) -> Void) {
        self.name(name)
        self.bytes.append(UInt8(ascii: "["))
        self.needsComma = false
        elements(&self)
        self.bytes.append(UInt8(ascii: "]"))
        self.needsComma = true
    }

    /// An object element of an array, its members written by `members`.
    mutating func element(_ members: (inout JSONWriter) -> Void) {
        if self.needsComma { self.bytes.append(UInt8(ascii: ",")) }
        self.beginObject()
        members(&self)
        self.endObject()
        self.needsComma = true
    }

    /// An RFC 3339 UTC timestamp with milliseconds, written without building a `String`.
    mutating func member(_ name: StaticString, timestampMilliseconds value: Int64) {
        self.name(name)
        self.bytes.appendBounded(BoundedWriter.timestampBound + 2) { json in
            json.byte(UInt8(ascii: "\""))
            json.timestamp(milliseconds: value)
            json.byte(UInt8(ascii: "\""))
        }
    }

    private mutating func name(_ name: StaticString) {
        if self.needsComma { self.bytes.append(UInt8(ascii: ",")) }
        self.needsComma = true
        self.bytes.append(UInt8(ascii: "\""))
        self.bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        self.bytes.append(contentsOf: "\":".utf8)
    }

    private mutating func string(_ value: String) {
        self.bytes.appendBounded(BoundedWriter.stringBound(value)) { $0.string(value) }
    }
}

/// RFC 3339 timestamps without Foundation's formatters, which are slow and, on Linux, crash when
/// used from several threads at once.
public enum Timestamp {
    /// Unix milliseconds for `2026-11-21T18:00:00Z`, `…T18:00:00.123Z` or `…T19:00:00+01:00`
    /// (fractions beyond milliseconds are truncated); `nil` for anything else.
    public static func parseRFC3339(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<digits {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt "),
            let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var millis = 0
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") {
                if digits < 3 { millis = millis * 10 + Int(bytes[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offsetMinutes = 0
        if expect("Zz") {
            // UTC
        } else if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = number(2), expect(":"), let offsetMins = number(2) else { return nil }
            offsetMinutes = sign * (offsetHours * 60 + offsetMins)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        // Days since 1970-01-01 from the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds =
            Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59)) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(millis)
    }

    /// `2026-11-21T18:00:00.123Z` for Unix milliseconds (outside the years 0000–9999, the nearest instant within them).
    public static func rfc3339(milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        self.appendRFC3339(milliseconds: milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `YYYY-MM-DDTHH:MM:SS.mmmZ` for Unix milliseconds.
    static func appendRFC3339(milliseconds: Int64, to bytes: inout [UInt8]) {
        bytes.appendBounded(BoundedWriter.timestampBound) { $0.timestamp(milliseconds: milliseconds) }
    }
}

/// Integers written as decimal digits straight into a byte buffer, without building a `String`.
public enum DecimalText {
    /// Appends the decimal digits of `value` (with a leading `-` when negative).
    ///
    /// Written into 20 bytes on the stack (`Int64.min` takes all 20), then copied in one piece:
    /// writing into a zeroed bound appended to `bytes` and trimming it cost many times more, and
    /// the worker writes two per record.
    public static func append(_ value: Int64, to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: BoundedWriter.integerBound) { text in
            var writer = BoundedWriter(buffer: text)
            writer.integer(value)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<writer.count]))
        }
    }
}
