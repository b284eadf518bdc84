@testable import FocusGate
import Testing

/// How the admin API reads an id from its path (what a client percent-encodes).
@Suite("Path parameters")
struct PathParameterTests {
    @Test(
        "percent-encoded UTF-8 is decoded; a '%' without two hex digits after it, or bytes that are not UTF-8, are refused",
        arguments: [
            ("u-42", "u-42"), ("caf%C3%A9", "café"), ("caf%c3%a9%20%2F%3F", "café /?"), ("%25", "%"),
            ("%E2%84%AA", "\u{212A}"), ("u%ZZ", nil), ("u%4", nil), ("u%", nil), ("%C3", nil), ("%FF%FE", nil),
        ] as [(String, String?)])
    func decoding(raw: String, expected: String?) {
        #expect(AdminAPI.percentDecoded(raw) == expected, "\(raw)")
    }
}
