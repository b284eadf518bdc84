import FocusGateKafka
import Testing

@testable import FocusGate

@Suite("Inputs whose outputs are refused")
struct UndeliverableInputsTests {
    typealias Position = UndeliverableInputs.Position

    static func error(_ code: Int32) -> KafkaError {
        KafkaError(code: .init(rawValue: code), message: "refused")
    }

    @Test("a refusal of the record's size dead-letters its input on the first replay")
    func sizeAtOnce() {
        var inputs = UndeliverableInputs(maxAttempts: 3)
        #expect(inputs.isEmpty)
        let position = Position(partition: 2, offset: 40)
        let refused1 = inputs.refused(position, error: Self.error(10))  // MSG_SIZE_TOO_LARGE
        #expect(refused1)
        #expect(!inputs.isEmpty)
        #expect(inputs.deadLetter(partition: 2, offset: 40)?.code == .messageSizeTooLarge)
        #expect(inputs.deadLetter(partition: 2, offset: 41) == nil)
        #expect(inputs.deadLetter(partition: 1, offset: 40) == nil)
        var other = UndeliverableInputs(maxAttempts: 3)
        let refused2 = other.refused(position, error: Self.error(18))  // RECORD_LIST_TOO_LARGE
        #expect(refused2)
    }

    @Test("another refusal of the record counts, and dead-letters at maxAttempts")
    func recordRefusalsCount() {
        var inputs = UndeliverableInputs(maxAttempts: 3)
        let position = Position(partition: 0, offset: 7)
        let refused3 = inputs.refused(position, error: Self.error(87))  // INVALID_RECORD
        #expect(!refused3)
        let refused4 = inputs.refused(position, error: Self.error(87))
        #expect(!refused4)
        #expect(inputs.attempts(of: position) == 2)
        #expect(inputs.isEmpty)
        let refused5 = inputs.refused(position, error: Self.error(87))
        #expect(refused5)
        #expect(inputs.deadLetter(partition: 0, offset: 7)?.code.rawValue == 87)
        let refused6 = inputs.refused(position, error: Self.error(7))
        #expect(refused6, "once dead-lettered, it stays so")
    }

    @Test(
        "a refusal that is not about the record never counts: a broker down, a timeout, a purge, a missing permission",
        arguments: [7, 6, -192, -152, -151, 29, 19, -195])
    func notAboutTheRecord(code: Int32) {
        var inputs = UndeliverableInputs(maxAttempts: 1)
        let position = Position(partition: 0, offset: 7)
        for _ in 0..<5 {
            let refused = inputs.refused(position, error: Self.error(code))
            #expect(!refused)
        }
        #expect(inputs.isEmpty && inputs.attempts(of: position) == 0)
    }

    @Test("a commit forgets what came before its offsets, and only in its partitions")
    func commitForgets() {
        var inputs = UndeliverableInputs(maxAttempts: 2)
        _ = inputs.refused(Position(partition: 0, offset: 5), error: Self.error(10))
        _ = inputs.refused(Position(partition: 0, offset: 9), error: Self.error(87))
        _ = inputs.refused(Position(partition: 1, offset: 3), error: Self.error(10))
        inputs.committed([0: 6])
        #expect(inputs.deadLetter(partition: 0, offset: 5) == nil, "dead-lettered and committed")
        #expect(inputs.attempts(of: Position(partition: 0, offset: 9)) == 1, "after the commit: kept")
        #expect(inputs.deadLetter(partition: 1, offset: 3) != nil, "another partition: kept")
        inputs.committed([0: 10, 1: 4])
        #expect(inputs.isEmpty && inputs.attempts(of: Position(partition: 0, offset: 9)) == 0)
    }

    @Test("a failed delivery names its input by focusgate-source, of the input topic only")
    func sourceParsed() {
        let prefix = Array("notifications/".utf8)
        #expect(
            DeliveryLog.position(Array("notifications/3/1234".utf8), prefix: prefix)
                == Position(partition: 3, offset: 1234))
        for source in [
            "notifications.other/3/1", "notifications/3", "notifications/x/1", "notifications/3/",
            "notifications/1/2/3", "other/1/2",
        ] {
            #expect(DeliveryLog.position(Array(source.utf8), prefix: prefix) == nil, "\(source)")
        }
    }
}
