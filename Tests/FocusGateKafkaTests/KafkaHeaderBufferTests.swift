import FocusGateCore
@testable import FocusGateKafka
import Testing

@Suite("Header buffer: headers built in place, reused from record to record")
struct KafkaHeaderBufferTests {
    @Test("headers come out in order, with empty and absent values kept apart; reuse keeps nothing of before")
    func orderAndValues() {
        var buffer = KafkaHeaderBuffer()
        buffer.append(name: "old", value: "gone")
        buffer.removeAll()
        buffer.append(name: "traceparent", value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        buffer.append(name: "empty", value: "")
        buffer.append(name: "absent", value: nil as [UInt8]?)
        buffer.append(name: "focusgate-source") { bytes in
            bytes.append(contentsOf: "notifications/".utf8)
            DecimalText.append(3, to: &bytes)
            bytes.append(UInt8(ascii: "/"))
            DecimalText.append(-1_234_567_890_123, to: &bytes)
        }
        #expect(
            buffer.headers == [
                KafkaHeader(name: "traceparent", value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
                KafkaHeader(name: "empty", value: []), KafkaHeader(name: "absent", value: nil),
                KafkaHeader(name: "focusgate-source", value: "notifications/3/-1234567890123"),
            ])
        #expect(KafkaHeaderBuffer([KafkaHeader(name: "a", value: "1")]).headers == [KafkaHeader(name: "a", value: "1")])
    }

    @Test("headers encoded once and names with values written per record come out as the same headers appended by name")
    func encodedHeaders() {
        let encoded = KafkaEncodedHeaders([
            KafkaHeader(name: "focusgate-decision", value: "delivered"), KafkaHeader(name: "absent", value: nil),
            KafkaHeader(name: "empty", value: []),
        ])
        #expect(
            encoded.headers == [
                KafkaHeader(name: "focusgate-decision", value: "delivered"), KafkaHeader(name: "absent", value: nil),
                KafkaHeader(name: "empty", value: []),
            ])
        var buffer = KafkaHeaderBuffer()
        for _ in 0..<2 {  // the second round reuses the storage
            buffer.removeAll()
            buffer.append(name: "traceparent", value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
            buffer.append(encoded)
            buffer.append(
                KafkaEncodedHeaders.Name("focusgate-focus"), value: "Wörk, a Focus named longer than 15 bytes")
            buffer.append(KafkaEncodedHeaders.Name("focusgate-decided-at"), value: Array("1795284000123".utf8))
            buffer.append(KafkaEncodedHeaders.Name("focusgate-context-version")) { DecimalText.append(42, to: &$0) }
            buffer.append(encoded)
            #expect(
                buffer.headers == [
                    KafkaHeader(name: "traceparent", value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
                ] + encoded.headers + [
                    KafkaHeader(name: "focusgate-focus", value: "Wörk, a Focus named longer than 15 bytes"),
                    KafkaHeader(name: "focusgate-decided-at", value: "1795284000123"),
                    KafkaHeader(name: "focusgate-context-version", value: "42"),
                ] + encoded.headers)
        }
    }

    @Test("no headers, no storage: the producer's calls without headers allocate nothing for them")
    func noHeadersNoStorage() {
        let none = KafkaHeaderBuffer([])
        #expect(none.count == 0)
        #expect(none.bytes.capacity == 0)
        #expect(none.entries.capacity == 0)
        // The worker's reused buffer keeps its reservation.
        #expect(KafkaHeaderBuffer().bytes.capacity >= 512)
    }

    @Test("badge keys and values written into reused buffers equal the allocating forms")
    func badgeBuffers() {
        var key: [UInt8] = Array("stale bytes from an earlier, longer record".utf8)
        var value: [UInt8] = key
        for update in [
            BadgeUpdate(
                userID: "u-\"1", appID: "com.example.chat", badge: 3, unread: 5, focus: "Work", contextVersion: 7,
                sequence: 9, updatedAtMilliseconds: 1_795_284_000_123),
            BadgeUpdate(
                userID: "u", appID: "a", badge: 0, unread: 0, focus: nil, contextVersion: nil, sequence: 1,
                updatedAtMilliseconds: 0),
        ] {
            update.writeKey(into: &key)
            update.writeJSON(into: &value)
            #expect(key == Array(update.key.utf8))
            #expect(value == update.jsonBytes)
        }
    }
}
