@testable import FocusGate
import FocusGateKafka
import Testing

@Suite("Interval ledger")
struct IntervalLedgerTests {
    @Test("each interval takes the next id, and its slot starts from zero")
    func idsRunUp() {
        let acknowledgements = KafkaAcknowledgements()
        var ledger = IntervalLedger(counting: true, acknowledgements: acknowledgements)
        #expect(ledger.current == 1)
        ledger.produced = 3
        for _ in 0..<3 { acknowledgements.acknowledged(1, failed: false) }
        let ended = ledger.advance(acknowledgements)
        #expect(ended.id == 1 && ended.produced == 3)
        #expect(ledger.current == 2 && ledger.produced == 0)
        #expect(acknowledgements.counts(of: 1) == (delivered: 3, failed: 0), "an ended interval keeps its counts")
    }

    @Test("an id whose slot still waits for records of an earlier interval is passed over, until they are acknowledged")
    func busySlotPassedOver() {
        let acknowledgements = KafkaAcknowledgements()
        let slots = UInt64(KafkaAcknowledgements.slotCount)
        var ledger = IntervalLedger(counting: true, acknowledgements: acknowledgements)
        // Interval 1 ends with 2 records of which 1 is acknowledged; every later one with none.
        ledger.produced = 2
        acknowledgements.acknowledged(1, failed: false)
        ledger.advance(acknowledgements)
        while ledger.current < slots { ledger.advance(acknowledgements) }
        ledger.advance(acknowledgements)
        #expect(ledger.current == slots + 2, "id \(slots + 1) shares slot 1 with interval 1, still in flight")
        #expect(acknowledgements.counts(of: 1) == (delivered: 1, failed: 0), "interval 1's count untouched")
        acknowledgements.acknowledged(1, failed: true)
        while ledger.current < 2 * slots { ledger.advance(acknowledgements) }
        ledger.advance(acknowledgements)
        #expect(ledger.current == 2 * slots + 1, "slot 1 is free once interval 1 is acknowledged, a failure included")
        #expect(acknowledgements.counts(of: 2 * slots + 1) == (0, 0))
    }

    @Test("with every slot waiting, the interval is not counted (id 0) and counting resumes once one frees")
    func everySlotBusy() {
        let acknowledgements = KafkaAcknowledgements()
        let slots = KafkaAcknowledgements.slotCount
        var ledger = IntervalLedger(counting: true, acknowledgements: acknowledgements)
        for _ in 0..<slots {
            ledger.produced = 1
            ledger.advance(acknowledgements)
        }
        #expect(ledger.current == 0)
        ledger.produced = 5
        #expect(ledger.advance(acknowledgements) == (id: 0, produced: 5))
        #expect(ledger.current == 0)
        acknowledgements.acknowledged(7, failed: false)
        ledger.advance(acknowledgements)
        #expect(ledger.current % UInt64(slots) == 7, "the one slot acknowledged")
    }

    @Test(
        "records counted for an interval and never produced are taken back: its slot frees once the rest are acknowledged"
    )
    func withdrawn() {
        let acknowledgements = KafkaAcknowledgements()
        let slots = UInt64(KafkaAcknowledgements.slotCount)
        var ledger = IntervalLedger(counting: true, acknowledgements: acknowledgements)
        // Interval 1 counts 5 records (a commit's backlog included); 3 are produced and acknowledged.
        ledger.produced = 5
        for _ in 0..<3 { acknowledgements.acknowledged(1, failed: false) }
        ledger.advance(acknowledgements)
        while ledger.current < slots { ledger.advance(acknowledgements) }
        ledger.advance(acknowledgements)
        #expect(ledger.current == slots + 2, "slot 1 waits for the 2 records never produced")
        ledger.withdraw(2, from: 1)
        while ledger.current < 2 * slots { ledger.advance(acknowledgements) }
        ledger.advance(acknowledgements)
        #expect(ledger.current == 2 * slots + 1, "slot 1 is free: its 3 produced records were acknowledged")
        // The interval being produced takes them back from its own count.
        ledger.produced = 4
        ledger.withdraw(3, from: ledger.current)
        #expect(ledger.produced == 1)
    }

    @Test("a ledger that does not count (exactly-once) keeps id 0")
    func notCounting() {
        let acknowledgements = KafkaAcknowledgements()
        var ledger = IntervalLedger(counting: false, acknowledgements: acknowledgements)
        ledger.produced = 4
        #expect(ledger.advance(acknowledgements) == (id: 0, produced: 4))
        #expect(ledger.current == 0 && ledger.produced == 0)
    }
}
