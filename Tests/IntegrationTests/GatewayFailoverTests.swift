import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateStore
import FocusGateHarness
import Foundation
import Testing

extension GatewayScenarioTests {
    /// Transaction failures, at-least-once mode, and partitions moving between instances.
    @Suite("Gateway failures and handover")
    struct GatewayFailoverTests {
        typealias Stream = EmbeddedBrokerTests.GatewayRestartTests

        /// Checks the audit: every input exactly once, badges equal to a recomputation.
        private func expectExactlyOnce(_ audit: Audit, _ records: [(key: String?, value: String)]) {
            let outputs = audit.outputsByID
            #expect(Set(outputs.keys) == Set(Stream.outputIDs(records)), "every input accounted for")
            let repeated = outputs.filter { $0.value.count != 1 }
            #expect(
                repeated.isEmpty,
                "\(repeated.count) ids repeated: \(repeated.prefix(3).map { ($0.key, $0.value.map { "\($0.topic) \($0.header("focusgate-source") ?? "") \($0.header("focusgate-decided-at") ?? "")" }) })"
            )
            #expect(audit.finalBadges == Events.expectedBadges(records), "badges equal a recomputation from the inputs")
        }

        @Test("an abortable transaction error: abort, rewind to the committed offsets, roll state back, continue")
        func abortAndContinue() async throws {
            let bench = try await GatewayBench()
            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            let records = Stream.stream(1000)
            try bench.send(Array(records[..<500]))
            _ = try await bench.settled(records: 500)

            // The next transaction cannot add its partitions: librdkafka makes that abortable.
            // TOPIC_AUTHORIZATION_FAILED
            try bench.broker.pushRequestErrors(.addPartitionsToTransaction, [KafkaError.Code(rawValue: 29)])
            try bench.send(Array(records[500...]))
            let audit = try await bench.settled(records: 1000)
            #expect(instance.metric("focusgate_transactions_total", labels: #"result="aborted""#) >= 1)
            #expect(
                instance.metric("focusgate_duplicates_total") == 0,
                "state rolled back: the replay is not mistaken for duplicates")
            // The mock writes no abort markers, so the aborted attempt's outputs stay visible to
            // the audit (a real cluster hides them): repeats are allowed up to the replays counted.
            audit.check(against: records, consumedAgain: instance.consumedAgain)
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("at-least-once mode: outputs, then offsets after delivery; a restart resumes with restored state")
        func atLeastOnce() async throws {
            let bench = try await GatewayBench()
            let records = Stream.stream(1000)
            let first = try await InProcessGateway(bench, configuration: bench.configuration(mode: .atLeastOnce))
            try bench.send(Array(records[..<500]))
            _ = try await bench.settled(records: 500)
            try await first.stop()

            let second = try await InProcessGateway(bench, configuration: bench.configuration(mode: .atLeastOnce))
            try bench.send(Array(records[500...]))
            self.expectExactlyOnce(try await bench.settled(records: 1000), records)
            #expect(second.metric("focusgate_transactions_total", labels: #"result="committed""#) >= 1)
            try await second.stop()
            await bench.shutdown()
        }

        @Test("two instances share the partitions; one stops; the other takes over with restored badge state")
        func handover() async throws {
            let bench = try await GatewayBench()
            let records = Stream.stream(1500)
            let first = try await InProcessGateway(bench, configuration: bench.configuration())
            try bench.send(Array(records[..<500]))
            _ = try await bench.settled(records: 500)

            let second = try await InProcessGateway(bench, configuration: bench.configuration())
            // Cooperative rebalancing hands the second instance some partitions, with their state.
            try await second.waitUntil({ second.metric("focusgate_rebalances_total") >= 1 }, timeout: .seconds(30))
            try bench.send(Array(records[500..<1000]))
            _ = try await bench.settled(records: 1000)
            #expect(second.metric("focusgate_events_consumed_total") > 0, "the second instance owns partitions")
            #expect(first.metric("focusgate_events_consumed_total") > 500, "so does the first")
            let owned = [first, second].map { $0.metric("focusgate_assigned_partitions") }
            #expect(owned.reduce(0, +) == 4 && !owned.contains(0), "focusgate_assigned_partitions: \(owned)")

            try await first.stop()
            #expect(first.metric("focusgate_assigned_partitions") == 0, "a stopped instance owns nothing")
            try bench.send(Array(records[1000...]))
            let audit = try await bench.settled(records: 1500)
            // A member whose assignment is lost mid-rebalance aborts its open transaction. A real
            // cluster hides the aborted outputs; the embedded broker writes no abort markers, so
            // they stay visible: the auditor allows no more repeats than the replays counted.
            let consumedAgain = first.consumedAgain + second.consumedAgain
            let findings = audit.check(against: records, consumedAgain: consumedAgain)
            print("handover audit: \(findings); \(Int(consumedAgain)) consumed again")
            // The survivor reads every user's committed badges, including those the first instance kept.
            let expected = Events.expectedBadges(records)
            var mismatched: [String] = []
            for (key, badge) in expected {
                let parts = key.split(separator: "/")
                let badges = await second.gateway.directory.held(userID: String(parts[0]))
                if badges.first(where: { $0.appID == badge.appID }) != badge { mismatched.append(key) }
            }
            #expect(mismatched.isEmpty, "badges API after the handover: \(mismatched.prefix(5))")
            try await second.stop()
            await bench.shutdown()
        }

        @Test(
            "PostgreSQL stopped under load: context-unavailable decisions, the partitions keep moving; restarted: contexts again, no gateway restart"
        )
        func storeOutage() async throws {
            let server = try PostgresServer.startPrivate()
            defer { server.destroy() }
            let database = "gateway_\(UUID().uuidString.prefix(8).lowercased())"
            try server.psql("CREATE DATABASE \(database)")
            let store = try PostgresContextStore(url: server.url(database: database), logger: KafkaTestSupport.logger)
            try await store.migrate()
            for user in 0..<60 {
                let context = FocusContext(
                    userID: "u-\(user)", version: 1, focus: "Work",
                    apps: ["chat": .init(filterPredicate: "SELF == 'work'")])
                _ = try await store.put(context)
            }
            let bench = try await GatewayBench()
            let instance = try await InProcessGateway(bench, configuration: bench.configuration(), store: store)
            func phase(_ name: String, users: Range<Int>) -> [(key: String?, value: String)] {
                (0..<100).map {
                    Events.notification(
                        "\(name)-\($0)", user: "u-\(users.lowerBound + $0 % users.count)", criteria: "home")
                }
            }
            try bench.send(phase("before", users: 0..<20))
            _ = try await bench.settled(records: 100)

            try server.stopServer()
            // Cached users keep their contexts; users seen for the first time cannot be loaded.
            try bench.send(phase("cached", users: 0..<20) + phase("uncached", users: 20..<40))
            _ = try await bench.settled(records: 300)

            try server.startServer()
            try bench.send(phase("after", users: 40..<60))
            let audit = try await bench.settled(records: 400)
            let outputs = audit.outputsByID
            #expect(
                outputs.count == 400 && outputs.values.allSatisfy { $0.count == 1 }, "every notification exactly once")
            func reasons(_ prefix: String) -> Set<String> {
                Set(
                    outputs.filter { $0.key.hasPrefix(prefix + "-") }.compactMap {
                        $0.value.first?.header("focusgate-reason")
                    })
            }
            #expect(reasons("before") == ["predicate-mismatch"])
            #expect(reasons("cached") == ["predicate-mismatch"], "cached contexts serve through the outage")
            #expect(reasons("uncached") == ["context-unavailable"], "delivered, flagged, never stalled")
            #expect(reasons("after") == ["predicate-mismatch"], "recovered without restarting the gateway")
            #expect(instance.metric("focusgate_context_load_failures_total") >= 1)
            try await instance.stop()
            await store.close()
            await bench.shutdown()
        }
    }
}
