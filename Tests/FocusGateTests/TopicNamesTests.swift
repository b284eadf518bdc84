import FocusGate
import FocusGateKafka
import Testing

@Suite("Topic names")
struct TopicNamesTests {
    @Test(
        "the contract's default names; badges, the state changelog and status are compacted; every topic has the same partition count"
    )
    func specifications() {
        let names = TopicNames()
        let specifications = names.specifications(partitions: 8, replicationFactor: 3)
        #expect(
            specifications.map(\.name) == [
                "notifications", "focus.invalidations", "notifications.delivered", "notifications.silenced",
                "notifications.badges", "focus.status", "notifications.summaries", "notifications.dlq",
                "focusgate.state",
            ])
        #expect(
            specifications.filter(\.isCompacted).map(\.name) == [
                "notifications.badges", "focus.status", "focusgate.state",
            ])
        #expect(specifications.allSatisfy { $0.partitions == 8 && $0.replicationFactor == 3 })
    }
}
