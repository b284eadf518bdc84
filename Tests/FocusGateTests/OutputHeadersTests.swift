import FocusGateCore
import FocusGateKafka
import Testing

@testable import FocusGate

@Suite("Output headers encoded once per worker")
struct OutputHeadersTests {
    @Test("every outcome and reason finds its own focusgate-decision and focusgate-reason headers")
    func verdicts() {
        let names = GatewayWorker.OutputHeaders()
        for outcome in [Decision.Outcome.delivered, .silenced] {
            for reason in Decision.Reason.all {
                let decision = Decision(outcome: outcome, reason: reason, focus: "Work", contextVersion: 3)
                #expect(
                    names.verdict(decision).headers == [
                        KafkaHeader(name: "focusgate-decision", value: outcome.rawValue),
                        KafkaHeader(name: "focusgate-reason", value: reason.rawValue),
                    ])
            }
        }
    }
}
