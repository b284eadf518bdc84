import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

extension GatewayScenarioTests {
    /// People lists and repeated senders through the whole pipeline, over the embedded broker.
    @Suite("People end to end")
    struct PeopleEndToEndTests {
        static let users = ["u-1", "u-2", "u-3"]
        static let senders = ["mom", "dad", "spam", "boss"]

        /// 120 notifications to a silenced app, record timestamps 50 s apart per user (hours
        /// before now): a sender comes back every 4th notification of a user, 200 s later, except
        /// every 8th, 150 s later; so only those are repeated within 180 s, where the wall clock
        /// would call every one repeated.
        static func stream(start: Int64) -> [(key: String, value: String, timestamp: Int64)] {
            (0..<120).map { index in
                let user = Self.users[index % 3]
                let step = index / 3
                let sender = Self.senders[step % 4]
                let timestamp = start + Int64(step) * 50_000 + (step % 8 == 4 ? -50_000 : 0)
                let value = Events.notification("n-\(index)", user: user, app: "chat", sender: sender).value
                return (user, value, timestamp)
            }
        }

        /// The reason of every notification id, from the delivered and silenced topics.
        static func reasons(_ bench: GatewayBench, delivered: String, silenced: String) throws -> [String: String] {
            var reasons: [String: String] = [:]
            for message in try bench.readAll(delivered) + bench.readAll(silenced) {
                guard let id = Audit.id(of: message) else { continue }
                reasons[id] = message.header("focusgate-reason")
            }
            return reasons
        }

        @Test(
            "allowed, silenced and repeated senders decided by record timestamps; a replay from offset 0 decides every notification alike"
        )
        func replayDecidesAlike() async throws {
            let bench = try await GatewayBench()
            for user in Self.users {
                try await bench.put(
                    FocusContext.fixture(
                        user, version: 1, apps: ["chat": .init(silenced: true)],
                        people: .init(allowed: ["boss"], silenced: ["spam"], allowRepeated: true)))
            }
            let start = SystemWallClock().nowMilliseconds() - 6 * 3_600_000
            let records = Self.stream(start: start)
            try bench.send(timestamped: records)

            let first = try await InProcessGateway(bench, configuration: bench.configuration())
            try await bench.waitForOutputs(records.count)
            try await first.stop()
            let decided = try Self.reasons(bench, delivered: bench.topics.delivered, silenced: bench.topics.silenced)

            // What the rules say, from the timestamps: per user, a sender's previous notification.
            var last: [String: Int64] = [:]
            var expected: [String: String] = [:]
            for (index, record) in records.enumerated() {
                let sender = Self.senders[(index / 3) % 4]
                let key = "\(record.key)/\(sender)"
                let repeated = last[key].map { abs(record.timestamp - $0) <= 180_000 } ?? false
                last[key] = max(last[key] ?? .min, record.timestamp)
                expected["n-\(index)"] =
                    switch sender {
                    case "spam": "person-silenced"
                    case "boss": "person-allowed"
                    default: repeated ? "repeated-sender" : "app-silenced"
                    }
            }
            #expect(decided == expected)
            #expect(Set(expected.values) == ["person-silenced", "person-allowed", "repeated-sender", "app-silenced"])

            // A replay from offset 0: another group, its own output and state topics.
            let second = try await InProcessGateway(bench, configuration: bench.replayConfiguration())
            let replayed = try await Wait.for(
                "the replay's decisions",
                { try Self.reasons(bench, delivered: "replay.delivered", silenced: "replay.silenced") }
            ) { $0.count >= records.count }
            try await second.stop()
            #expect(replayed == decided, "the replay decided every notification alike")
            await bench.shutdown()
        }
    }
}
