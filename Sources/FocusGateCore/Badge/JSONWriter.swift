/// Writes small JSON documents straight to bytes (RFC 8259 escaping), for output records.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init() {
        self.bytes.reserveCapacity(192)
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
        self.bytes.append(contentsOf: String(value).utf8)
    }

    private mutating func name(_ name: StaticString) {
        if self.needsComma { self.bytes.append(UInt8(ascii: ",")) }
        self.needsComma = true
        self.bytes.append(UInt8(ascii: "\""))
        self.bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        self.bytes.append(contentsOf: "\":".utf8)
    }

    private mutating func string(_ value: String) {
        self.bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): self.bytes.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): self.bytes.append(contentsOf: "\\\\".utf8)
            case 0x0A: self.bytes.append(contentsOf: "\\n".utf8)
            case 0x0D: self.bytes.append(contentsOf: "\\r".utf8)
            case 0x09: self.bytes.append(contentsOf: "\\t".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                self.bytes.append(contentsOf: "\\u00".utf8)
                self.bytes.append(hex[Int(byte >> 4)])
                self.bytes.append(hex[Int(byte & 0xF)])
            default: self.bytes.append(byte)
            }
        }
        self.bytes.append(UInt8(ascii: "\""))
    }
}

/// Timestamp formatting without Foundation's formatters (which are slow and not thread-safe to share).
public enum Timestamp {
    /// `2026-11-21T18:00:00.123Z` for Unix milliseconds.
    public static func rfc3339(milliseconds: Int64) -> String {
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
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(Int(year), 4))-\(pad(Int(month), 2))-\(pad(Int(day), 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millis, 3))Z"
    }
}
