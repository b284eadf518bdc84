import Testing

@testable import FocusGateCore

@Suite("JSON scanner")
struct JSONScannerTests {
    /// The first byte of `bytes` that a string scan must look at: a quote, a backslash, a control
    /// byte or a byte of a multi-byte scalar.
    private static func firstAttention(_ bytes: [UInt8]) -> Int? {
        bytes.firstIndex { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 >= 0x80 }
    }

    @Test(
        "the eight-byte mask is empty exactly when no byte needs attention, and its lowest bit is the first one that does"
    )
    func attentionMask() {
        var random = SeededGenerator(state: 29)
        // Mostly plain bytes, with each kind of byte that needs attention, and their neighbours.
        let special: [UInt8] = [0x22, 0x5C, 0x00, 0x1F, 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<200_000 {
            let bytes = (0..<8).map { _ in
                Int.random(in: 0..<4, using: &random) == 0
                    ? special.randomElement(using: &random)! : UInt8.random(in: 0x20...0x7E, using: &random)
            }
            let word = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
            let mask = JSONScanner.attention(word)
            if let first = Self.firstAttention(bytes) {
                #expect(mask != 0 && mask.trailingZeroBitCount >> 3 == first, "\(bytes)")
            } else {
                #expect(mask == 0, "\(bytes)")
            }
        }
    }

    @Test(
        "strings of every length up to 40 bytes, with an attention byte at each place, scan as a byte-wise scan would")
    func stringsAtEveryPlace() throws {
        let decoder = EventDecoder()
        for length in 0...40 {
            let plain = String((0..<length).map { Character(UnicodeScalar(UInt8(ascii: "a") + UInt8($0 % 26))) })
            #expect(try decoder.decode(Array(#"{"id":"\#(plain)x","userId":"u","appId":"a"}"#.utf8)).id == plain + "x")
            for place in 0...length {
                var escaped = plain
                escaped.insert(contentsOf: #"\u00e9"#, at: escaped.index(escaped.startIndex, offsetBy: place))
                var multiByte = plain
                multiByte.insert("é", at: multiByte.index(multiByte.startIndex, offsetBy: place))
                let event = try decoder.decode(
                    Array(#"{"id":"\#(escaped)","userId":"\#(multiByte)","appId":"a"}"#.utf8))
                #expect(event.id == multiByte && event.userID == multiByte)
                var control = Array(#"{"id":"\#(plain)","userId":"u","appId":"a"}"#.utf8)
                control[7 + place] = 0x09
                #expect(throws: EventDecodingError.self) { try decoder.decode(control) }
            }
        }
    }
}
