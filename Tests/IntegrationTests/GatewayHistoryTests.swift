import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension GatewayScenarioTests {
    /// "Why didn't I get it?": a user's recent decisions through the admin API of a group of
    /// `focusgate serve` instances, against what the outputs' headers said.
    @Suite("A user's recent decisions")
    struct GatewayHistoryTests {
        /// What the outputs' headers and the API both say of a notification.
        struct Said: Equatable, CustomStringConvertible {
            var decision: String?
            var reason: String?
            var focus: String?
            var contextVersion: String?
            var source: String?

            var description: String {
                [self.decision, self.reason, self.focus, self.contextVersion, self.source].map { $0 ?? "-" }
                    .joined(separator: " ")
            }

            init(headers message: KafkaMessage) {
                self.decision = message.header("focusgate-decision")
                self.reason = message.header("focusgate-reason")
                self.focus = message.header("focusgate-focus")
                self.contextVersion = message.header("focusgate-context-version")
                self.source = message.header("focusgate-source")
            }

            init(api item: [String: Any]) {
                self.decision = item["decision"] as? String
                self.reason = item["reason"] as? String
                self.focus = item["focus"] as? String
                self.contextVersion = (item["contextVersion"] as? Int).map { "\($0)" }
                self.source = item["source"] as? String
            }
        }

        static func get(_ instance: ServeProcess, _ path: String) async -> (status: Int, body: [String: Any]) {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(instance.adminPort)\(path)")!)
            request.timeoutInterval = 10
            guard let (data, response) = try? await URLSession.shared.data(for: request),
                let status = (response as? HTTPURLResponse)?.statusCode
            else { return (0, [:]) }
            return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
        }

        /// What `instance` says of each of the user's notifications, by list and one by one, when
        /// it answers them all with 200; `nil` otherwise (a 503 while partitions move).
        static func answers(_ instance: ServeProcess, user: String, ids: [String]) async -> (
            list: [String: Said], each: [String: Said], order: [String]
        )? {
            let (status, page) = await Self.get(instance, "/v1/users/\(user)/notifications")
            guard status == 200, let items = page["notifications"] as? [[String: Any]] else { return nil }
            var list: [String: Said] = [:]
            for item in items { list[item["notificationId"] as? String ?? "?"] = Said(api: item) }
            var each: [String: Said] = [:]
            for id in ids {
                let (itemStatus, item) = await Self.get(instance, "/v1/users/\(user)/notifications/\(id)")
                guard itemStatus == 200 else { return nil }
                each[id] = Said(api: item)
            }
            return (list, each, items.map { $0["notificationId"] as? String ?? "?" })
        }

        /// When the instance says `user`'s newest notification was decided, once it holds the user.
        static func decidedAt(_ instance: InProcessGateway, user: String) async -> Int64? {
            guard
                case .held(let page) = await instance.gateway.directory.history(
                    userID: user, query: HistoryQuery(limit: 1))
            else { return nil }
            return page.items.first?.decidedAtMilliseconds
        }

        @Test(
            "each state record's timestamp is the commit's time by the gateway's clock, and decided-at comes back from it exactly"
        )
        func decidedAtRestored() async throws {
            let bench = try await GatewayBench(partitions: 1)
            // A day behind the machine's clock: a record stamped by the producer would be a day off.
            let clock = ManualWallClock(startingAt: SystemWallClock().nowMilliseconds() - 86_400_000)
            var configuration = bench.configuration()
            configuration.clock = clock
            let first = try await InProcessGateway(bench, configuration: configuration)
            try await first.waitUntil { first.gateway.assignedPartitions == bench.partitions }
            let notification = Events.notification("n-1", user: "u-1")
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: [(notification.key, notification.value)])
            try await first.waitUntil(
                { ((try? bench.committedOffsets()) ?? [:]).values.reduce(0, +) == 1 }, what: "the input committed")
            #expect(await Self.decidedAt(first, user: "u-1") == clock.nowMilliseconds())
            try await first.stop()
            let state = try bench.readAll(bench.topics.state)
            #expect(state.count >= 2 && state.allSatisfy { $0.timestamp == clock.nowMilliseconds() }, "\(state)")

            clock.advance(by: .seconds(3_600))
            let second = try await InProcessGateway(bench, configuration: configuration)
            try await second.waitUntil { second.gateway.assignedPartitions == bench.partitions }
            #expect(await Self.decidedAt(second, user: "u-1") == clock.nowMilliseconds() - 3_600_000)
            try await second.stop()
            await bench.shutdown()
        }

        @Test(
            "a notification of every reason: the list and each one say what the outputs' headers said, on either of two instances and after a restart of the owner"
        )
        func everyReason() async throws {
            let bench = try await GatewayBench()
            let start = EmbeddedBrokerTests.GatewayFleetTests.group(bench, size: 2)
            var instances = [try await start(0), try await start(1)]
            for instance in instances { #expect(try await instance.waitUntilReady(timeout: .seconds(60))) }
            let pair = instances
            try await Wait.until("both instances hold partitions", timeout: .seconds(90)) {
                for instance in pair where await instance.metric("focusgate_assigned_partitions") < 1 { return false }
                return true
            }
            let user = "u-why"
            // No context yet: no Focus.
            try bench.send([Events.notification("n-free", user: user, criteria: "work")])
            _ = try await bench.waitForOutputs(1)
            // Work: chat lets its work account through, mail is silenced, Bob is silenced, at most
            // 2 deliveries an hour (critical ones counted too).
            try await bench.put(
                FocusContext(
                    userID: user, version: 4, focus: "Work",
                    apps: ["chat": .init(filterPredicate: "SELF == 'work'"), "mail": .init(silenced: true)],
                    people: .init(silenced: ["bob"]),
                    rateLimits: .init(perUser: .init(max: 2, windowSeconds: 3_600), exempt: [])))
            try await Wait.until("both instances heard of the context", timeout: .seconds(30)) {
                for instance in pair {
                    let heard = await instance.metrics().filter { $0.key.hasPrefix("focusgate_invalidations_total") }
                    if heard.values.reduce(0, +) < 1 { return false }
                }
                return true
            }
            let records = [
                Events.notification("n-match", user: user, criteria: "work"),
                Events.notification("n-mismatch", user: user, criteria: "home"),
                Events.notification("n-app", user: user, app: "mail"),
                Events.notification("n-person", user: user, criteria: "work", sender: "bob"),
                Events.notification("n-critical", user: user, app: "mail", level: "critical"),
                Events.notification("n-limited", user: user, criteria: "work"),
            ]
            try bench.send(records)
            let audit = try await bench.waitForOutputs(7)
            var said: [String: Said] = [:]
            for message in audit.delivered + audit.silenced {
                guard let object = try? JSONSerialization.jsonObject(with: Data(message.value ?? [])) as? [String: Any],
                    let id = object["id"] as? String
                else { continue }
                said[id] = Said(headers: message)
            }
            let expected = said
            let ids =
                ["n-free"]
                + records.compactMap {
                    (try? JSONSerialization.jsonObject(with: Data($0.value.utf8)) as? [String: Any])?["id"] as? String
                }
            #expect(
                Set(said.values.compactMap(\.reason)) == [
                    "no-focus", "predicate-match", "predicate-mismatch", "app-silenced", "person-silenced",
                    "breakthrough-critical", "rate-limited",
                ], "\(said)")

            /// Whether every instance answers, by list and one by one, what the headers said.
            @Sendable func allAnswerRight(_ instances: [ServeProcess]) async -> [String] {
                var wrong: [String] = []
                for (index, instance) in instances.enumerated() {
                    guard let answers = await Self.answers(instance, user: user, ids: ids) else {
                        wrong.append("instance \(index) did not answer every question with 200")
                        continue
                    }
                    if answers.order != ids.reversed() { wrong.append("instance \(index) order \(answers.order)") }
                    for id in ids {
                        let headers = expected[id].map { "\($0)" } ?? "none"
                        if answers.list[id] != expected[id] {
                            wrong.append(
                                "instance \(index) list \(id): \(answers.list[id].map { "\($0)" } ?? "none") ≠ \(headers)"
                            )
                        }
                        if answers.each[id] != expected[id] {
                            wrong.append(
                                "instance \(index) item \(id): \(answers.each[id].map { "\($0)" } ?? "none") ≠ \(headers)"
                            )
                        }
                    }
                }
                return wrong
            }
            var wrong: [String] = []
            try await Wait.until("both instances answer what the headers said", timeout: .seconds(30)) {
                wrong = await allAnswerRight(pair)
                return wrong.isEmpty
            }
            #expect(wrong.isEmpty, "\(wrong)")

            // The owner restarts: the state comes back from the changelog, and both answer alike.
            let owner = try #require(
                await {
                    for (index, instance) in pair.enumerated() {
                        let (_, answer) = await Self.get(instance, "/v1/instance/users/\(user)/notifications")
                        if answer["held"] as? Bool == true { return index }
                    }
                    return nil
                }())
            #expect(await instances[owner].stop(SIGTERM) == 0)
            instances[owner] = try await start(owner)
            #expect(try await instances[owner].waitUntilReady(timeout: .seconds(60)))
            let restarted = instances
            try await Wait.until("both answer what the headers said after the owner's restart", timeout: .seconds(120))
            {
                wrong = await allAnswerRight(restarted)
                return wrong.isEmpty
            }
            #expect(wrong.isEmpty, "\(wrong)")
            let (status, unknown) = await Self.get(instances[1 - owner], "/v1/users/\(user)/notifications/n-never")
            #expect(status == 404 && unknown["error"] as? String == "notification-unknown")
            for instance in instances { #expect(await instance.stop(SIGTERM) == 0) }
            await bench.shutdown()
        }
    }
}
