import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

extension GatewayScenarioTests {
    /// Rate limits and repeated senders through the whole pipeline: decided by record timestamps,
    /// alike across a partition handover and in a replay from offset 0.
    @Suite("Rate limits end to end")
    struct RateLimitEndToEndTests {
        static let users = (0..<30).map { "u-\($0)" }
        static let senders = ["mom", "dad", "boss", "sis"]
        static let perUser = 5
        static let perApp = 3
        static let window: Int64 = 600_000

        /// Every user's context: the Work Focus silences `news` but allows `boss`, lets repeated
        /// senders through, and caps deliveries (5 per user, 3 per app, in 10 minutes), exempting
        /// only critical notifications.
        static let context = FocusContext.fixture(
            "", predicate: nil, apps: ["news": .init(silenced: true)],
            people: .init(allowed: ["boss"], allowRepeated: true),
            rateLimits: .init(
                perUser: .init(max: perUser, windowSeconds: Int(window / 1000)),
                perApp: .init(max: perApp, windowSeconds: Int(window / 1000)), exempt: [.critical]))

        struct Input {
            var user: String
            var id: String
            var app: String
            var sender: String
            var critical: Bool
            var timestamp: Int64
            var record: (key: String?, value: String) {
                Events.notification(
                    self.id, user: self.user, app: self.app, level: self.critical ? "critical" : nil,
                    sender: self.sender)
            }
        }

        /// 40 notifications per user, 40 s apart by record timestamp (hours before now): apps in
        /// turn `news`, `chat`, `mail`; senders in turn, so each comes back 160 s later (a repeated
        /// sender); every 10th critical.
        static func stream(start: Int64) -> [Input] {
            (0..<(40 * Self.users.count)).map { index in
                let step = index / Self.users.count
                return Input(
                    user: Self.users[index % Self.users.count], id: "n-\(index)",
                    app: ["news", "chat", "mail"][step % 3],
                    sender: Self.senders[step % 4], critical: step % 10 == 9, timestamp: start + Int64(step) * 40_000)
            }
        }

        /// The reasons the rules give, computed here independently of the gateway's state: a
        /// window counts deliveries whose 50 s slot (a twelfth of the window) is among the last 12.
        static func expectedReasons(_ inputs: [Input]) -> [String: String] {
            let slot = { (time: Int64) in time / (Self.window / 12) }
            var lastFrom: [String: Int64] = [:]
            var deliveredToUser: [String: [Int64]] = [:]
            var deliveredFromApp: [String: [Int64]] = [:]
            var reasons: [String: String] = [:]
            for input in inputs {
                let senderKey = "\(input.user)/\(input.sender)"
                let repeated = lastFrom[senderKey].map { input.timestamp - $0 <= 180_000 } ?? false
                lastFrom[senderKey] = input.timestamp
                var reason: String
                if input.app != "news" {
                    reason = "no-criteria"
                } else if input.sender == "boss" {
                    reason = "person-allowed"
                } else if input.critical {
                    reason = "breakthrough-critical"
                } else if repeated {
                    reason = "repeated-sender"
                } else {
                    reason = "app-silenced"
                }
                let delivered = reason != "app-silenced"
                let appKey = "\(input.user)/\(input.app)"
                if delivered && !input.critical {
                    let inWindow = { (times: [Int64]) in times.filter { slot($0) > slot(input.timestamp) - 12 }.count }
                    if inWindow(deliveredToUser[input.user, default: []]) >= Self.perUser
                        || inWindow(deliveredFromApp[appKey, default: []]) >= Self.perApp
                    {
                        reason = "rate-limited"
                    }
                }
                if reason != "app-silenced" && reason != "rate-limited" {
                    deliveredToUser[input.user, default: []].append(input.timestamp)
                    deliveredFromApp[appKey, default: []].append(input.timestamp)
                }
                reasons[input.id] = reason
            }
            return reasons
        }

        static func produce(_ bench: GatewayBench, _ inputs: ArraySlice<Input>) throws {
            try bench.send(timestamped: inputs.map { ($0.user, $0.record.value, $0.timestamp) })
        }

        /// The reasons of every output per id: all outputs of an id (an aborted attempt's too,
        /// which the embedded broker leaves visible) must agree.
        static func reasons(_ bench: GatewayBench, delivered: String, silenced: String) throws -> [String: Set<String>]
        {
            var reasons: [String: Set<String>] = [:]
            for message in try bench.readAll(delivered) + bench.readAll(silenced) {
                guard let id = Audit.id(of: message) else { continue }
                reasons[id, default: []].insert(message.header("focusgate-reason") ?? "?")
            }
            return reasons
        }

        @Test(
            "rate limits and repeated senders decided by record timestamps: as the rules say across a partition handover (audited), and alike in a replay from offset 0"
        )
        func handoverAndReplay() async throws {
            let bench = try await GatewayBench()
            for user in Self.users {
                var context = Self.context
                context.userID = user
                try await bench.put(context)
            }
            let inputs = Self.stream(start: SystemWallClock().nowMilliseconds() - 6 * 3_600_000)
            let expected = Self.expectedReasons(inputs)
            #expect(
                Set(expected.values)
                    == [
                        "no-criteria", "person-allowed", "breakthrough-critical", "repeated-sender", "app-silenced",
                        "rate-limited",
                    ], "the stream exercises every rule")

            let first = try await InProcessGateway(bench, configuration: bench.configuration())
            try Self.produce(bench, inputs[..<400])
            _ = try await bench.settled(records: 400)
            let second = try await InProcessGateway(bench, configuration: bench.configuration())
            try await second.waitUntil({ second.metric("focusgate_rebalances_total") >= 1 }, timeout: .seconds(30))
            try Self.produce(bench, inputs[400..<800])
            _ = try await bench.settled(records: 800)
            try await first.stop()
            try Self.produce(bench, inputs[800...])
            let audit = try await bench.settled(records: inputs.count)
            #expect(second.metric("focusgate_events_consumed_total") > 0, "the second instance took partitions over")
            let consumedAgain = first.consumedAgain + second.consumedAgain
            let findings = audit.check(
                against: inputs.map(\.record), consumedAgain: consumedAgain, context: Self.context.compiledForTests())
            print("rate-limit handover audit: \(findings); \(Int(consumedAgain)) consumed again")
            try await second.stop()

            let decided = try Self.reasons(bench, delivered: bench.topics.delivered, silenced: bench.topics.silenced)
            let wrong = expected.filter { decided[$0.key] != [$0.value] }
            #expect(
                wrong.isEmpty,
                "\(wrong.count) decided otherwise than the rules, e.g. \(wrong.sorted { $0.key < $1.key }.prefix(4).map { "\($0.key): expected \($0.value), got \(decided[$0.key] ?? [])" })"
            )

            // A replay from offset 0: another group, its own output and state topics, fresh state.
            let again = try await InProcessGateway(bench, configuration: bench.replayConfiguration())
            let replayedDecisions = try await Wait.for(
                "the replay's decisions",
                { try Self.reasons(bench, delivered: "replay.delivered", silenced: "replay.silenced") }
            ) { $0.count >= inputs.count }
            try await again.stop()
            #expect(replayedDecisions == decided, "the replay decided every notification alike")
            await bench.shutdown()
        }
    }
}
