import FocusGateCore
import FocusGateHarness
import Foundation
import Testing

@Suite("Badge records and timestamps")
struct BadgeRecordTests {
    static let now: Int64 = 1_795_000_000_000

    static func context(
        version: Int64, focus: String? = "Work", predicate: String = "SELF IN {'work'}", hideBadges: Bool = false,
        expiresAt: Int64? = nil
    ) -> CompiledFocusContext {
        FocusContext.fixture(
            version: version, focus: focus, predicate: predicate,
            expiresAt: expiresAt.map(Date.init(unixMilliseconds:)),
            hideBadges: hideBadges
        ).compiledForTests()
    }

    @Test("badge records: key and JSON value")
    func record() throws {
        let update = BadgeUpdate(
            userID: "u-\"42", appID: "com.example.chat", badge: 2, unread: 5, focus: "Work", contextVersion: 17,
            sequence: 9, updatedAtMilliseconds: 1_795_284_000_123)
        #expect(update.key == "u-\"42/com.example.chat")
        let object = try #require(JSONSerialization.jsonObject(with: Data(update.jsonBytes)) as? [String: Any])
        #expect(object["userId"] as? String == "u-\"42")
        #expect(object["badge"] as? Int == 2 && object["unread"] as? Int == 5 && object["sequence"] as? Int == 9)
        #expect(object["contextVersion"] as? Int == 17 && object["focus"] as? String == "Work")
        #expect(object["updatedAt"] as? String == "2026-11-21T18:00:00.123Z")
        let off = BadgeUpdate(
            userID: "u", appID: "a", badge: 0, unread: 0, focus: nil, contextVersion: nil, sequence: 1,
            updatedAtMilliseconds: 0)
        #expect(String(decoding: off.jsonBytes, as: UTF8.self).contains(#""focus":null,"contextVersion":null"#))
    }

    @Test(
        "badge JSON escapes what must be escaped and writes every integer exactly",
        arguments: [
            Int64(0), 7, 10, 999, 1_000_000_007, -42, Int64.max, Int64.min, 9_999_999_999_999_999,
            10_000_000_000_000_000,
        ])
    func jsonValues(version: Int64) throws {
        let update = BadgeUpdate(
            userID: "u-\"quoted\"\n\\", appID: "app\u{01}é", badge: 3, unread: 4, focus: "Wörk \t",
            contextVersion: version,
            sequence: UInt64(Int64.max), updatedAtMilliseconds: 1_795_284_000_123
        )
        let object = try #require(JSONSerialization.jsonObject(with: Data(update.jsonBytes)) as? [String: Any])
        #expect(
            object["userId"] as? String == "u-\"quoted\"\n\\" && object["appId"] as? String == "app\u{01}é"
                && object["focus"] as? String == "Wörk \t")
        #expect(String(decoding: update.jsonBytes, as: UTF8.self).contains(#""contextVersion":\#(version),"#))
        #expect(object["sequence"] as? Int == Int.max)
    }

    @Test(
        "RFC 3339 timestamps",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00.000Z"), (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"), (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
        ])
    func timestamps(milliseconds: Int64, text: String) {
        #expect(Timestamp.rfc3339(milliseconds: milliseconds) == text)
        #expect(Timestamp.parseRFC3339(text) == milliseconds)
    }

    @Test("timestamps outside RFC 3339's four-digit years are written as the nearest one it has; Int64's extremes fit")
    func timestampExtremes() throws {
        #expect(Timestamp.rfc3339(milliseconds: 253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.rfc3339(milliseconds: 253_402_300_800_000) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.rfc3339(milliseconds: -62_167_219_200_000) == "0000-01-01T00:00:00.000Z")
        #expect(Timestamp.rfc3339(milliseconds: Int64.min) == "0000-01-01T00:00:00.000Z")
        for milliseconds in [Int64.max, Int64.min] {
            let update = BadgeUpdate(
                userID: "u", appID: "a", badge: Int.max, unread: Int.min, focus: nil, contextVersion: Int64.min,
                sequence: UInt64.max, updatedAtMilliseconds: milliseconds)
            let object = try #require(JSONSerialization.jsonObject(with: Data(update.jsonBytes)) as? [String: Any])
            #expect(object["badge"] as? Int == Int.max && object["unread"] as? Int == Int.min)
            #expect((object["updatedAt"] as? String)?.hasSuffix("Z") == true)
            let status = FocusStatusUpdate(
                userID: "u-\u{07}", status: FocusStatus(focused: true, until: milliseconds, contextVersion: Int64.max),
                sequence: UInt64.max, updatedAtMilliseconds: milliseconds)
            var bytes: [UInt8] = []
            status.writeJSON(into: &bytes)
            let statusObject = try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            #expect(statusObject["userId"] as? String == "u-\u{07}" && statusObject["focused"] as? Bool == true)
        }
    }

    @Test("RFC 3339 parsing: offsets, fractions, refusals")
    func timestampParsing() {
        #expect(Timestamp.parseRFC3339("2026-11-21T18:00:00Z") == 1_795_284_000_000)
        #expect(Timestamp.parseRFC3339("2026-11-21T19:30:00+01:30") == 1_795_284_000_000)
        #expect(Timestamp.parseRFC3339("2026-11-21T18:00:00.5Z") == 1_795_284_000_500)
        #expect(Timestamp.parseRFC3339("2026-11-21T18:00:00.123456Z") == 1_795_284_000_123)
        for bad in [
            "2026-11-21", "2026-11-21T18:00:00", "2026-13-01T00:00:00Z", "tomorrow", "2026-11-21T18:00:00.Z",
            "2026-11-21T18:00:00Zx",
        ] {
            #expect(Timestamp.parseRFC3339(bad) == nil, "\(bad)")
        }
    }

    @Test("decimal text appends what String(value) spells, after what the buffer held, Int64's extremes too")
    func decimalText() {
        let values: [Int64] = [0, 7, 9, 10, 99, 100, 123_456, -1, -10, -987_654_321, .max, .min, .max - 1, .min + 1]
        for value in values {
            var bytes = Array("x/".utf8)
            DecimalText.append(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "x/\(value)")
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let value = Int64.random(in: .min ... .max, using: &random) >> Int64.random(in: 0..<63, using: &random)
            var bytes: [UInt8] = []
            DecimalText.append(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
    }
}
