import FocusGate
import FocusGateHarness
import Foundation
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

    @Test("docs/contract.md's topic tables name every topic of the code, and no other, compacted where the code says")
    func contractTables() throws {
        let section = try ProjectDocuments.section("Topics")
        let tables = section.components(separatedBy: "\n### Creating the topics\n")
        #expect(tables.count == 2, "the Topics section and its Creating the topics table")
        let usages = TopicNames().usages
        let names = Set(usages.map(\.name))
        for table in tables {
            // A row's first cell names one or more topics in backticks.
            var listed: Set<String> = []
            var compacted: Set<String> = []
            for line in table.split(separator: "\n") where line.hasPrefix("| `") {
                let cells = line.split(separator: "|").map(String.init)
                let topics = cells[0].split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map {
                    String($0.element)
                }
                listed.formUnion(topics)
                if line.contains("compact") { compacted.formUnion(topics) }
            }
            #expect(
                listed == names,
                "only in the table: \(listed.subtracting(names)); only in the code: \(names.subtracting(listed))")
            #expect(
                compacted == Set(usages.filter(\.isCompacted).map(\.name)),
                "compacted in the table: \(compacted.sorted())")
        }
    }
}
