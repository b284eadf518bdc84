@testable import FocusGateCore
import Foundation
import Testing

@Suite("Event decoding")
struct EventDecoderTests {
    let decoder = EventDecoder()

    private func decode(_ json: String, key: String? = nil) throws(EventDecodingError) -> NotificationEvent {
        try self.decoder.decode(Array(json.utf8), key: key.map { Array($0.utf8) })
    }

    @Test("a plain event")
    func plain() throws {
        let event = try self.decode(
            #"{"id":"n1","userId":"u-42","appId":"com.example.chat","filterCriteria":"work","interruptionLevel":"critical","relevanceScore":0.25,"payload":{"x":[1,2,{"y":null}]}}"#,
            key: "u-42")
        #expect(
            event
                == NotificationEvent(
                    kind: .notification, id: "n1", userID: "u-42", appID: "com.example.chat", filterCriteria: "work",
                    interruptionLevel: .critical, relevanceScore: 0.25))
    }

    /// Where a String's UTF-8 lives: the same address for two values means one shared storage.
    private static func storage(_ text: String) -> UnsafeRawPointer? {
        var text = text
        return text.withUTF8 { UnsafeRawPointer($0.baseAddress) }
    }

    @Test("app ids from a pool: decoded as without it, a long one stored once, escaped and short ones not pooled")
    func pooledAppIDs() throws {
        var pool = IdentifierPool(capacity: 2)
        func decode(_ appID: String) throws -> String {
            let value = Array(#"{"id":"n","userId":"u","appId":"\#(appID)"}"#.utf8)
            let pooled = try value.withUnsafeBytes { bytes in
                try self.decoder.decode(value: bytes, key: nil, identifiers: &pool).appID
            }
            #expect(pooled == (try self.decode(#"{"id":"n","userId":"u","appId":"\#(appID)"}"#).appID))
            return pooled
        }
        let first = try decode("com.example.calendar")
        let second = try decode("com.example.calendar")
        #expect(Self.storage(first) == Self.storage(second), "the second record's app id is the pooled copy")
        _ = try decode("chat")
        _ = try decode(#"com.example.\u0063alendar"#)
        #expect(pool.count == 1, "short and escaped app ids are made as before")
        _ = try decode("com.example.mail.app")
        let third = try decode("com.example.news.app")
        #expect(pool.count == 2, "the pool keeps at most its capacity")
        let fourth = try decode("com.example.news.app")
        #expect(Self.storage(third) != Self.storage(fourth), "past capacity: made per record")
    }

    @Test(
        "filter criteria from the same pool: either member, stored once, as without it; an escaped one made as before")
    func pooledCriteria() throws {
        var pool = IdentifierPool()
        func decode(_ json: String) throws -> String? {
            let pooled = try Array(json.utf8).withUnsafeBytes { bytes in
                try self.decoder.decode(value: bytes, key: nil, identifiers: &pool).filterCriteria
            }
            #expect(pooled == (try self.decode(json).filterCriteria))
            return pooled
        }
        let top = try decode(#"{"id":"n","userId":"u","appId":"a","filterCriteria":"work-account-identifier"}"#)
        let aps = try decode(
            #"{"id":"n","userId":"u","appId":"a","aps":{"filter-criteria":"work-account-identifier"}}"#)
        #expect(top == "work-account-identifier" && Self.storage(top!) == Self.storage(aps!))
        #expect(pool.count == 1)
        let escaped = try decode(
            #"{"id":"n","userId":"u","appId":"a","filterCriteria":"work-account-identifie\u0072"}"#)
        #expect(escaped == "work-account-identifier" && pool.count == 1)
        #expect(try decode(#"{"id":"n","userId":"u","appId":"a","filterCriteria":7}"#) == nil)
    }

    @Test(
        "a notification id of 16 to 40 bytes is held in the event, not made a String; every id reads back, equal and hashed as the same id given as a String"
    )
    func heldIdentifiers() throws {
        var pool = IdentifierPool()
        let ids: [(id: String, held: Bool)] = [
            ("n-1", false), (String(repeating: "a", count: 15), false), (String(repeating: "b", count: 16), true),
            ("6f1c2d4e-8a9b-4c3d-9e8f-0a1b2c3d4e5f", true), (String(repeating: "c", count: 40), true),
            (String(repeating: "d", count: 41), false), (String(repeating: "\u{E9}", count: 18), true),
        ]
        for (id, held) in ids {
            let json = #"{"id":"\#(id)","userId":"u","appId":"a"}"#
            let event = try Array(json.utf8).withUnsafeBytes { bytes in
                try self.decoder.decode(value: bytes, key: nil, identifiers: &pool)
            }
            #expect(event.id == id)
            #expect(event.identifier.isInline == held, "\(id.utf8.count) bytes")
            let given = NotificationEvent(id: id, userID: "u", appID: "a")
            #expect(event == given && event.hashValue == given.hashValue)
            #expect(try self.decode(json) == event)
        }
        let escaped = try self.decode(#"{"id":"6f1c2d4e-8a9b-4c3d-9e8f-0a1b2c3d4e5\u0066","userId":"u","appId":"a"}"#)
        #expect(escaped.id == "6f1c2d4e-8a9b-4c3d-9e8f-0a1b2c3d4e5f" && !escaped.identifier.isInline)
        var changed = escaped
        changed.id = "n-2"
        #expect(changed.id == "n-2" && changed != escaped)
    }

    @Test("interruption levels read from the bytes: the four values exactly, escaped as plain, anything else active")
    func levelsFromBytes() throws {
        for (text, level) in [
            ("passive", InterruptionLevel.passive), ("time-sensitive", .timeSensitive), ("critical", .critical),
            ("active", .active), (#"critic\u0061l"#, .critical), ("Critical", .active), ("critical ", .active),
            ("", .active), ("passive-ish", .active),
        ] {
            let top = try self.decode(#"{"id":"n","userId":"u","appId":"a","interruptionLevel":"\#(text)"}"#)
            let aps = try self.decode(#"{"id":"n","userId":"u","appId":"a","aps":{"interruption-level":"\#(text)"}}"#)
            #expect(top.interruptionLevel == level && aps.interruptionLevel == level, "\(text)")
        }
        // Each level spells itself as Apple does and reads back as itself; the four are distinct.
        let levels = [InterruptionLevel.passive, .active, .timeSensitive, .critical]
        #expect(levels.map(\.rawValue) == ["passive", "active", "time-sensitive", "critical"])
        #expect(levels.map { InterruptionLevel(parsing: $0.description) } == levels && Set(levels).count == 4)
    }

    @Test("an identifier pool finds each of many ids again by its bytes")
    func identifierPoolProbes() {
        var pool = IdentifierPool(capacity: 300)
        let ids = (0..<300).map { "com.example.app-\($0)" }
        let kept = ids.map { id in Array(id.utf8).withUnsafeBufferPointer { pool.string($0) } }
        for (id, stored) in zip(ids, kept) {
            let again = Array(id.utf8).withUnsafeBufferPointer { pool.string($0) }
            #expect(again == id && Self.storage(again) == Self.storage(stored))
        }
        #expect(pool.count == 300)
    }

    @Test("senderId: absent, or a bounded id; another type, empty, too long or twice is refused")
    func sender() throws {
        #expect(try self.decode(#"{"id":"n","userId":"u","appId":"a"}"#).senderID == nil)
        #expect(try self.decode(#"{"id":"n","userId":"u","appId":"a","senderId":"mom"}"#).senderID == "mom")
        let long = String(repeating: "s", count: EventDecoder.maxIdentifierBytes)
        #expect(try self.decode(#"{"id":"n","userId":"u","appId":"a","senderId":"\#(long)"}"#).senderID == long)
        for (json, code) in [
            (#"{"id":"n","userId":"u","appId":"a","senderId":7}"#, EventDecodingError.Code.wrongType),
            (#"{"id":"n","userId":"u","appId":"a","senderId":null}"#, .wrongType),
            (#"{"id":"n","userId":"u","appId":"a","senderId":""}"#, .invalidValue),
            (#"{"id":"n","userId":"u","appId":"a","senderId":"\#(long)s"}"#, .invalidValue),
            (#"{"id":"n","userId":"u","appId":"a","senderId":"a","senderId":"b"}"#, .duplicateField),
        ] {
            let error = #expect(throws: EventDecodingError.self) { try self.decode(json) }
            #expect(error?.code == code && error?.field == "senderId", "\(json.prefix(80))")
        }
    }

    @Test("threadId, else aps thread-id; one that is not a string of 1 to 256 bytes is ignored; twice is refused")
    func thread() throws {
        let base = #"{"id":"n","userId":"u","appId":"a""#
        #expect(try self.decode(base + "}").threadID == nil)
        #expect(try self.decode(base + #","threadId":"family"}"#).threadID == "family")
        #expect(try self.decode(base + #","aps":{"thread-id":"work"}}"#).threadID == "work")
        #expect(try self.decode(base + #","threadId":"family","aps":{"thread-id":"work"}}"#).threadID == "family")
        #expect(try self.decode(base + #","threadId":7,"aps":{"thread-id":"work"}}"#).threadID == "work")
        let long = String(repeating: "t", count: EventDecoder.maxIdentifierBytes + 1)
        for ignored in [#""threadId":7"#, #""threadId":"""#, #""threadId":"\#(long)""#, #""threadId":null"#] {
            #expect(try self.decode(base + ",\(ignored)}").threadID == nil, "\(ignored.prefix(40))")
        }
        let error = #expect(throws: EventDecodingError.self) {
            try self.decode(base + #","threadId":"a","threadId":"b"}"#)
        }
        #expect(error?.code == .duplicateField && error?.field == "threadId")
    }

    @Test("an APNs-shaped event takes its fields from aps")
    func apnsShaped() throws {
        let event = try self.decode(
            #"{"id":"n2","userId":"u","appId":"a","aps":{"alert":{"title":"Hi","body":"Lunch?"},"filter-criteria":"work-account","interruption-level":"time-sensitive","relevance-score":7}}"#
        )
        #expect(event.filterCriteria == "work-account")
        #expect(event.interruptionLevel == .timeSensitive)
        #expect(event.relevanceScore == 1)
    }

    @Test("top-level fields win over aps; non-string criteria is ignored and falls back to aps")
    func precedence() throws {
        let topLevel = try self.decode(
            #"{"id":"n","userId":"u","appId":"a","filterCriteria":"top","interruptionLevel":"passive","relevanceScore":-3,"aps":{"filter-criteria":"aps","interruption-level":"critical","relevance-score":0.5}}"#
        )
        #expect(topLevel.filterCriteria == "top")
        #expect(topLevel.interruptionLevel == .passive)
        #expect(topLevel.relevanceScore == 0)
        let fallback = try self.decode(
            #"{"id":"n","userId":"u","appId":"a","filterCriteria":42,"aps":{"filter-criteria":"aps"}}"#)
        #expect(fallback.filterCriteria == "aps")
        let none = try self.decode(
            #"{"id":"n","userId":"u","appId":"a","filterCriteria":null,"aps":{"filter-criteria":["x"]}}"#)
        #expect(none.filterCriteria == nil)
        #expect(none.relevanceScore == nil)
    }

    @Test("an empty criteria string is present, not absent")
    func emptyCriteria() throws {
        #expect(try self.decode(#"{"id":"n","userId":"u","appId":"a","filterCriteria":""}"#).filterCriteria == "")
    }

    @Test(
        "interruption level follows Apple's exact-string rule",
        arguments: [
            ("passive", InterruptionLevel.passive), ("active", .active), ("time-sensitive", .timeSensitive),
            ("critical", .critical), ("Critical", .active), ("timeSensitive", .active), ("", .active),
            (" critical", .active),
        ])
    func interruptionLevel(text: String, level: InterruptionLevel) throws {
        #expect(
            try self.decode(#"{"id":"n","userId":"u","appId":"a","interruptionLevel":"\#(text)"}"#).interruptionLevel
                == level)
    }

    @Test("read and clear events")
    func readAndClear() throws {
        let read = try self.decode(
            #"{"type":"read","id":"r1","userId":"u","appId":"a","notificationIds":["n1","n\u00e92"]}"#)
        #expect(read.kind == .read && read.notificationIDs == ["n1", "né2"])
        let clear = try self.decode(#"{"type":"clear","id":"c1","userId":"u","appId":"a"}"#)
        #expect(clear.kind == .clear && clear.notificationIDs.isEmpty)
    }

    @Test("escapes are decoded in routing fields and compared with the key after decoding")
    func escapes() throws {
        let event = try self.decode(
            #"{"id":"n\"1\\","userId":"u\u00e9\ud83d\ude00","appId":"a\/b","filterCriteria":"tab\there"}"#, key: "ué😀")
        #expect(event.id == "n\"1\\")
        #expect(event.userID == "ué😀")
        #expect(event.appID == "a/b")
        #expect(event.filterCriteria == "tab\there")
    }

    @Test(
        "bad records are refused with their DLQ code",
        arguments: [
            (#"{"id":"n","userId":"u","appId":"a""#, EventDecodingError.Code.invalidJSON),
            (#"{"id":"n","userId":"u","appId":"a",}"#, .invalidJSON),
            (#"{"id":"n","userId":"u","appId":"a"} x"#, .invalidJSON),
            (#"{"id":'n',"userId":"u","appId":"a"}"#, .invalidJSON),
            (#"{"id":"n","userId":"u","appId":"a","x":01}"#, .invalidJSON),
            (#"{"id":"n","userId":"u","appId":"a","x":1.}"#, .invalidJSON),
            (#"{"id":"n","userId":"u","appId":"a","x":tru}"#, .invalidJSON),
            (#"{"id":"n","userId":"u","appId":"a","x":"\x"}"#, .invalidJSON),
            (#"{"id":"n","userId":"u","appId":"a","x":"\ud800"}"#, .invalidJSON),
            ("{\"id\":\"n\",\"userId\":\"u\",\"appId\":\"a\",\"x\":\"tab\there\"}", .invalidJSON),
            ("", .invalidJSON),
            ("   ", .invalidJSON),
            (#"[{"id":"n"}]"#, .wrongType),
            (#""just a string""#, .wrongType),
            (#"{"userId":"u","appId":"a"}"#, .missingField),
            (#"{"id":"n","appId":"a"}"#, .missingField),
            (#"{"id":"n","userId":"u"}"#, .missingField),
            (#"{"type":"read","id":"n","userId":"u","appId":"a"}"#, .missingField),
            (#"{"id":5,"userId":"u","appId":"a"}"#, .wrongType),
            (#"{"id":"n","userId":null,"appId":"a"}"#, .wrongType),
            (#"{"type":"read","id":"n","userId":"u","appId":"a","notificationIds":"n1"}"#, .wrongType),
            (#"{"type":"read","id":"n","userId":"u","appId":"a","notificationIds":[1]}"#, .wrongType),
            (#"{"type":"delete","id":"n","userId":"u","appId":"a"}"#, .invalidValue),
            (#"{"id":"","userId":"u","appId":"a"}"#, .invalidValue),
            (#"{"id":"n","userId":"u","userId":"v","appId":"a"}"#, .duplicateField),
            (
                #"{"id":"n","userId":"u","appId":"a","aps":{"filter-criteria":"x","filter-criteria":"y"}}"#,
                .duplicateField
            ),
        ])
    func refusals(json: String, code: EventDecodingError.Code) {
        let error = #expect(throws: EventDecodingError.self) { try self.decode(json) }
        #expect(error?.code == code, "\(String(describing: error))")
    }

    @Test(
        "invalid UTF-8 anywhere is invalid JSON",
        arguments: [
            [0xC3, 0x28], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0xC0, 0xAF],
            [0xE2, 0x82],
        ] as [[UInt8]])
    func invalidUTF8(sequence: [UInt8]) {
        let json = Array(#"{"id":"n","userId":"u","appId":"a","payload":""#.utf8) + sequence + Array(#""}"#.utf8)
        let error = #expect(throws: EventDecodingError.self) { try self.decoder.decode(json) }
        #expect(error?.code == .invalidJSON)
    }

    @Test("size, depth, identifier length and key checks")
    func limits() {
        let small = EventDecoder(maxEventBytes: 64)
        let large = Array(
            #"{"id":"n","userId":"u","appId":"a","payload":"\#(String(repeating: "x", count: 64))"}"#.utf8)
        #expect(throws: EventDecodingError(code: .tooLarge, detail: "\(large.count) bytes, limit 64")) {
            try small.decode(large)
        }

        let deep =
            #"{"id":"n","userId":"u","appId":"a","payload":"# + String(repeating: "[", count: 100)
            + String(repeating: "]", count: 100) + "}"
        let error = #expect(throws: EventDecodingError.self) { try self.decode(deep) }
        #expect(error?.code == .invalidJSON && error?.detail.contains("nesting") == true)

        let longID = String(repeating: "i", count: 257)
        #expect(throws: EventDecodingError.self) { try self.decode(#"{"id":"\#(longID)","userId":"u","appId":"a"}"#) }
        let maxID = try? self.decode(#"{"id":"\#(String(repeating: "i", count: 256))","userId":"u","appId":"a"}"#)
        #expect(maxID?.id.count == 256)

        let mismatch = #expect(throws: EventDecodingError.self) {
            try self.decode(#"{"id":"n","userId":"u-1","appId":"a"}"#, key: "u-2")
        }
        #expect(mismatch?.code == .keyMismatch)
        let tombstone = #expect(throws: EventDecodingError.self) { try self.decoder.decode(value: nil, key: nil) }
        #expect(tombstone?.code == .missingField)
    }

    @Test("error descriptions never contain field values")
    func noPayloadInErrors() {
        let secret = "very-secret-user-data"
        for json in [
            #"{"id":"n","userId":"\#(secret)","appId":"a"}"#,
            #"{"id":"n","userId":"\#(secret)","appId":"a","x":"\#(secret)\x"}"#,
            #"{"type":"\#(secret)","id":"n","userId":"u","appId":"a"}"#,
        ] {
            do {
                _ = try self.decode(json, key: "other")
                Issue.record("expected a refusal")
            } catch {
                #expect(!error.description.contains(secret))
            }
        }
    }

    @Test("random valid JSON objects decode like Foundation reads them", arguments: 0..<4)
    func agreesWithFoundation(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let words = ["work", "é", "\"", "\\", "\n", "home", "", "😀", "a/b", "\u{1}"]
        func word() -> String {
            (0..<Int.random(in: 0...3, using: &random)).map { _ in words.randomElement(using: &random)! }.joined()
        }
        for _ in 0..<300 {
            var object: [String: Any] = ["id": "n" + word(), "userId": "u" + word(), "appId": "a" + word()]
            if Bool.random(using: &random) { object["filterCriteria"] = word() }
            if Bool.random(using: &random) {
                object["interruptionLevel"] = ["passive", "critical", "x", "active"].randomElement(using: &random)!
            }
            if Bool.random(using: &random) { object["relevanceScore"] = Double.random(in: -2...2, using: &random) }
            if Bool.random(using: &random) {
                object["aps"] = [
                    "filter-criteria": word(), "alert": ["body": word()],
                    "relevance-score": Int.random(in: -1...2, using: &random),
                ]
            }
            if Bool.random(using: &random) { object["payload"] = ["nested": [[word(): [1, 2.5, true, NSNull()]]]] }
            let data = try JSONSerialization.data(withJSONObject: object)
            let event = try self.decoder.decode(Array(data))
            let aps = object["aps"] as? [String: Any]
            #expect(event.id == object["id"] as? String)
            #expect(event.userID == object["userId"] as? String)
            #expect(event.appID == object["appId"] as? String)
            #expect(event.filterCriteria == (object["filterCriteria"] as? String ?? aps?["filter-criteria"] as? String))
            #expect(event.interruptionLevel == InterruptionLevel(parsing: object["interruptionLevel"] as? String ?? ""))
            let score = (object["relevanceScore"] as? Double) ?? (aps?["relevance-score"] as? Int).map(Double.init)
            #expect(
                event.relevanceScore.map { ($0 * 1e9).rounded() } == score.map { (min(max($0, 0), 1) * 1e9).rounded() })
        }
    }
}
