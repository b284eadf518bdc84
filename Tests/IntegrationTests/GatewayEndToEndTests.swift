import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Foundation
import Logging
import Synchronization
import Testing

extension GatewayScenarioTests {
    /// The gateway against the embedded broker over TCP: decisions, headers, DLQ, dedupe, badges.
    @Suite("Gateway end to end")
    struct GatewayEndToEndTests {
        static func context(
            _ user: String, version: Int64, focus: String? = "Work", allowTimeSensitive: Bool = true,
            otherApps: FocusContext.OtherApps = .deliver, expiresAt: Date? = nil
        ) -> FocusContext {
            FocusContext.fixture(
                user, version: version, focus: focus, expiresAt: expiresAt, allowTimeSensitive: allowTimeSensitive,
                otherApps: otherApps,
                apps: [
                    "chat": .init(filterPredicate: "SELF IN {'work'}"),
                    "mail": .init(silenced: true),
                    "calendar": .init(),
                    "legacy": .init(filterPredicate: "SELF < 5"),
                ],
                people: .init(allowed: ["boss"], silenced: ["spam"])
            )
        }

        @Test(
            "every decision reason, the contract's headers, input bytes unchanged, APNs-shaped events, each DLQ class, dedupe",
            arguments: TestCluster.available, [GatewayConfiguration.DeliveryMode.exactlyOnce, .atLeastOnce])
        func decisions(on cluster: TestCluster, mode: GatewayConfiguration.DeliveryMode) async throws {
            let bench = try await GatewayBench(on: cluster)
            let instance = try await InProcessGateway(bench, configuration: bench.configuration(mode: mode))
            try await bench.put(Self.context("u-work", version: 1))
            try await bench.put(Self.context("u-strict", version: 1, allowTimeSensitive: false, otherApps: .silence))
            try await bench.put(Self.context("u-expired", version: 1, expiresAt: Date(timeIntervalSinceNow: -60)))
            try await bench.put(Self.context("u-stale", version: 1))
            // u-stale is cached, then an invalidation announces version 9 that the store does not
            // have: the gateway must not decide with version 1 (context-unavailable).
            try bench.send([Events.notification("warm", user: "u-stale", criteria: "work")])
            try await bench.waitForOutputs(1)
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.invalidations,
                records: [("u-stale", #"{"userId":"u-stale","version":9}"#)])
            try await instance.waitUntil({ instance.invalidationsHandled >= 5 }, what: "the version-9 announcement")

            let cases: [(record: (key: String?, value: String), reason: String, decision: String)] = [
                (Events.notification("n-nofocus", user: "u-nobody", criteria: "work"), "no-focus", "delivered"),
                (Events.notification("n-expired", user: "u-expired", criteria: "home"), "no-focus", "delivered"),
                (
                    Events.notification("n-silenced", user: "u-work", app: "mail", criteria: "work"), "app-silenced",
                    "silenced"
                ),
                (
                    Events.notification("n-other", user: "u-strict", app: "shop", criteria: "work"), "app-silenced",
                    "silenced"
                ),
                (Events.notification("n-nocriteria", user: "u-work"), "no-criteria", "delivered"),
                (
                    Events.notification("n-nofilter", user: "u-work", app: "calendar", criteria: "home"), "no-filter",
                    "delivered"
                ),
                (Events.notification("n-match", user: "u-work", criteria: "work"), "predicate-match", "delivered"),
                (Events.notification("n-mismatch", user: "u-work", criteria: "home"), "predicate-mismatch", "silenced"),
                (
                    Events.notification("n-error", user: "u-work", app: "legacy", criteria: "home"), "predicate-error",
                    "delivered"
                ),
                (
                    Events.notification("n-critical", user: "u-work", app: "mail", level: "critical"),
                    "breakthrough-critical", "delivered"
                ),
                (
                    Events.notification("n-timely", user: "u-work", app: "mail", level: "time-sensitive"),
                    "breakthrough-time-sensitive", "delivered"
                ),
                (
                    Events.notification(
                        "n-timely-strict", user: "u-strict", app: "mail", criteria: "x", level: "time-sensitive"),
                    "app-silenced", "silenced"
                ),
                (
                    Events.notification("n-unavailable", user: "u-stale", criteria: "home"), "context-unavailable",
                    "delivered"
                ),
                (
                    Events.notification("n-person-allowed", user: "u-work", app: "mail", sender: "boss"),
                    "person-allowed", "delivered"
                ),
                (
                    Events.notification("n-person-silenced", user: "u-work", app: "calendar", sender: "spam"),
                    "person-silenced", "silenced"
                ),
                (Events.apns("n-apns-match", user: "u-work", criteria: "work"), "predicate-match", "delivered"),
                (Events.apns("n-apns-mismatch", user: "u-work", criteria: "home"), "predicate-mismatch", "silenced"),
                (
                    Events.apns("n-apns-critical", user: "u-work", criteria: "home", level: "critical"),
                    "breakthrough-critical", "delivered"
                ),
            ]
            let bad: [(record: (key: String?, value: String), code: String)] = [
                (("u-bad", "not json {"), "invalid-json"),
                (("u-bad", #"{"id":"b1","userId":"u-bad"}"#), "missing-field"),
                (("u-bad", #"{"id":2,"userId":"u-bad","appId":"chat"}"#), "wrong-type"),
                (("u-bad", #"["an","array"]"#), "wrong-type"),
                (("u-bad", #"{"type":"bogus","id":"b3","userId":"u-bad","appId":"chat"}"#), "invalid-value"),
                (("u-bad", #"{"id":"b4","id":"b5","userId":"u-bad","appId":"chat"}"#), "duplicate-field"),
                (
                    (
                        "u-bad",
                        #"{"id":"b6","userId":"u-bad","appId":"chat","payload":"\#(String(repeating: "x", count: 3000))"}"#
                    ), "too-large"
                ),
                (("u-other", #"{"id":"b7","userId":"u-bad","appId":"chat"}"#), "key-mismatch"),
            ]
            let duplicate = Events.notification("n-match", user: "u-work", criteria: "work")
            try bench.send(cases.map(\.record) + bad.map(\.record) + [duplicate])

            let audit = try await bench.waitForOutputs(1 + cases.count + bad.count)
            let outputs = audit.outputsByID
            for expected in cases {
                let id = try #require(
                    Audit.id(
                        of: KafkaMessage(
                            topic: "", partition: 0, offset: 0, key: nil, value: Array(expected.record.value.utf8),
                            headers: [], timestamp: nil)))
                let records = outputs[id] ?? []
                #expect(records.count == 1, "\(id): exactly one output")
                guard let record = records.first else { continue }
                #expect(record.header("focusgate-reason") == expected.reason, "\(id)")
                #expect(record.header("focusgate-decision") == expected.decision, "\(id)")
                #expect(
                    record.topic == (expected.decision == "delivered" ? bench.topics.delivered : bench.topics.silenced),
                    "\(id)")
                #expect(record.valueString == expected.record.value, "\(id): the input bytes, unchanged")
                #expect(record.keyString == expected.record.key)
                let source = try #require(record.header("focusgate-source"))
                #expect(source.hasPrefix("\(bench.topics.notifications)/"))
                let decidedAt = try #require(record.header("focusgate-decided-at").flatMap { Int64($0) })
                #expect(abs(decidedAt - Int64(Date().timeIntervalSince1970 * 1000)) < 120_000)
            }
            let work = try #require(outputs["n-match"]?.first)
            #expect(work.header("focusgate-focus") == "Work" && work.header("focusgate-context-version") == "1")
            let noFocus = try #require(outputs["n-nofocus"]?.first)
            #expect(noFocus.header("focusgate-focus") == nil && noFocus.header("focusgate-context-version") == nil)
            let expired = try #require(outputs["n-expired"]?.first)
            #expect(expired.header("focusgate-focus") == nil && expired.header("focusgate-context-version") == "1")

            for expected in bad {
                let records = outputs[expected.record.value] ?? []
                #expect(records.count == 1, "\(expected.code): one DLQ record")
                guard let record = records.first else { continue }
                #expect(record.topic == bench.topics.deadLetters)
                #expect(record.header("focusgate-error") == expected.code)
                #expect(record.header("focusgate-error-detail")?.isEmpty == false)
                #expect(record.header("focusgate-source")?.hasPrefix("\(bench.topics.notifications)/") == true)
            }
            #expect(audit.deadLetters.count == bad.count)
            try await instance.waitUntil { instance.metric("focusgate_duplicates_total") == 1 }
            #expect(
                instance.metric("focusgate_duplicates_total") == 1,
                "the repeated n-match is counted and produces nothing")
            #expect(instance.metric("focusgate_events_consumed_total") == Double(1 + cases.count + bad.count + 1))
            #expect(instance.metric("focusgate_dlq_total", labels: #"error="wrong-type""#) == 2)
            #expect(
                instance.metric("focusgate_decisions_total", labels: #"decision="silenced",reason="app-silenced""#) == 3
            )
            #expect(
                instance.metric(
                    "focusgate_decisions_total", labels: #"decision="delivered",reason="context-unavailable""#) == 1)
            if mode == .exactlyOnce {
                #expect(instance.metric("focusgate_transactions_total", labels: #"result="committed""#) >= 1)
            }
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "an input's headers (traceparent, content-type, repeats, no value, a spoofed focusgate-*) come out first and unchanged on delivered, silenced and DLQ records",
            arguments: TestCluster.available, [GatewayConfiguration.DeliveryMode.atLeastOnce, .exactlyOnce])
        func inputHeadersPassThrough(on cluster: TestCluster, mode: GatewayConfiguration.DeliveryMode) async throws {
            let bench = try await GatewayBench(on: cluster)
            let instance = try await InProcessGateway(bench, configuration: bench.configuration(mode: mode))
            try await bench.put(Self.context("u-trace", version: 1))
            let input = [
                KafkaHeader(name: "traceparent", value: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                KafkaHeader(name: "tracestate", value: "vendor=opaque"),
                KafkaHeader(name: "content-type", value: "application/json"),
                KafkaHeader(name: "x-correlation-id", value: "a"),
                KafkaHeader(name: "x-correlation-id", value: "b"),
                KafkaHeader(name: "x-no-value", value: nil),
                KafkaHeader(name: "x-binary", value: [0, 255, 1]),
                KafkaHeader(name: "focusgate-decision", value: "delivered"),
            ]
            let records = [
                Events.notification("h-delivered", user: "u-trace", criteria: "work"),
                Events.notification("h-silenced", user: "u-trace", criteria: "home"),
                ("u-trace", "not json {"),
            ]
            let outcomes = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: records.map { ($0.key, $0.value) },
                headers: input)
            #expect(outcomes.count == records.count && outcomes.allSatisfy { $0.error == nil })

            let audit = try await bench.waitForOutputs(records.count)
            let outputs = audit.outputsByID
            let expectations: [(id: String, topic: String, own: [String])] = [
                (
                    "h-delivered", bench.topics.delivered,
                    [
                        "focusgate-decision", "focusgate-reason", "focusgate-focus", "focusgate-context-version",
                        "focusgate-source", "focusgate-decided-at",
                    ]
                ),
                (
                    "h-silenced", bench.topics.silenced,
                    [
                        "focusgate-decision", "focusgate-reason", "focusgate-focus", "focusgate-context-version",
                        "focusgate-source", "focusgate-decided-at",
                    ]
                ),
                (
                    "not json {", bench.topics.deadLetters,
                    ["focusgate-error", "focusgate-error-detail", "focusgate-source"]
                ),
            ]
            for expected in expectations {
                let output = try #require(outputs[expected.id]?.first, "\(expected.id): an output")
                #expect(output.topic == expected.topic)
                #expect(
                    Array(output.headers.prefix(input.count)) == input,
                    "\(expected.id): the input's headers first, unchanged")
                #expect(
                    output.headers.dropFirst(input.count).map(\.name) == expected.own,
                    "\(expected.id): then FocusGate's")
            }
            // The last header of a name is FocusGate's: the spoofed decision does not win.
            #expect(outputs["h-silenced"]?.first?.header("focusgate-decision") == "silenced")
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "badges through Focus on → Focus changes → Focus off → read → clear; the API reads them",
            arguments: TestCluster.available)
        func badgeLifecycle(on cluster: TestCluster) async throws {
            let bench = try await GatewayBench(on: cluster)
            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            try await bench.put(Self.context("u-1", version: 1))
            try await instance.waitUntil({ instance.invalidationsHandled >= 1 }, what: "the context announced")

            /// The badge records of u-1/chat once one with `sequence` is there (updates are coalesced
            /// per commit, so how many come before it depends on where the commits fell).
            func badgeRecords(through sequence: Int) async throws -> [[String: Any]] {
                try await Wait.for(
                    "a badge record with sequence \(sequence)", timeout: .seconds(20),
                    {
                        try bench.readAll(bench.topics.badges).filter { $0.keyString == "u-1/chat" }.compactMap {
                            try? JSONSerialization.jsonObject(with: Data($0.value ?? [])) as? [String: Any]
                        }
                    }
                ) { records in records.contains { $0["sequence"] as? Int == sequence } }
            }

            // Focus on (Work accepts "work"): two notifications count, one is silenced and does not.
            try bench.send([
                Events.notification("a", user: "u-1", criteria: "work"),
                Events.notification("b", user: "u-1", criteria: "home"),
                Events.apns("c", user: "u-1", criteria: "work"),
            ])
            var records = try await badgeRecords(through: 2)
            #expect(
                records.last?["badge"] as? Int == 2 && records.last?["unread"] as? Int == 3
                    && records.last?["focus"] as? String == "Work" && records.last?["contextVersion"] as? Int == 1)

            // The Focus changes to one that accepts only "home": recomputed on the owning worker.
            var personal = Self.context("u-1", version: 2, focus: "Personal")
            personal.apps["chat"] = .init(filterPredicate: "SELF == 'home'")
            try await bench.put(personal)
            records = try await badgeRecords(through: 3)
            #expect(
                records.last?["badge"] as? Int == 1 && records.last?["focus"] as? String == "Personal"
                    && records.last?["contextVersion"] as? Int == 2)

            // Focus off: everything unread counts.
            try await bench.put(Self.context("u-1", version: 3, focus: nil))
            records = try await badgeRecords(through: 4)
            #expect(records.last?["badge"] as? Int == 3 && records.last?["focus"] is NSNull)

            // Read two, then clear the app.
            try bench.send([Events.read("r1", user: "u-1", ids: ["a", "c"])])
            records = try await badgeRecords(through: 5)
            #expect(records.last?["badge"] as? Int == 1 && records.last?["unread"] as? Int == 1)
            try bench.send([Events.clear("c1", user: "u-1")])
            records = try await badgeRecords(through: 6)
            #expect(records.last?["badge"] as? Int == 0 && records.last?["unread"] as? Int == 0)
            let sequences = records.compactMap { $0["sequence"] as? Int }
            #expect(sequences.count == records.count && zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 })
            #expect(
                records.allSatisfy {
                    ($0["userId"] as? String) == "u-1" && ($0["appId"] as? String) == "chat"
                        && $0["updatedAt"] is String
                })

            // The API's view: committed badges of the owning worker.
            let published = Double(records.count)
            try await instance.waitUntil { instance.metric("focusgate_badge_updates_total") == published }
            let badges = try await Wait.for(
                "the API's badges at sequence 6", { await instance.gateway.directory.held(userID: "u-1") }
            ) { $0.first?.sequence == 6 }
            #expect(badges == [Badge(appID: "chat", badge: 0, unread: 0, sequence: 6)])
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("a context's expiry recomputes the badge without any message (time moved by an injected clock)")
        func expiryRecomputesBadges() async throws {
            let bench = try await GatewayBench()
            let clock = ManualWallClock()
            var configuration = bench.configuration()
            configuration.clock = clock
            let instance = try await InProcessGateway(bench, configuration: configuration)
            let expiresAt = Date(timeIntervalSince1970: Double(clock.nowMilliseconds()) / 1000 + 3600)
            try await bench.put(Self.context("u-exp", version: 1, expiresAt: expiresAt))
            try await instance.waitUntil({ instance.invalidationsHandled >= 1 }, what: "the context announced")

            /// The latest badge record of u-exp/chat once one satisfies `accept`.
            func badge(where accept: @escaping ([String: Any]) -> Bool) async throws -> [String: Any] {
                try await Wait.for(
                    "a badge record of u-exp/chat", timeout: .seconds(20),
                    {
                        try bench.readAll(bench.topics.badges).filter { $0.keyString == "u-exp/chat" }.compactMap {
                            try? JSONSerialization.jsonObject(with: Data($0.value ?? [])) as? [String: Any]
                        }.last
                    }
                ) { $0.map(accept) ?? false }!
            }
            // Work Focus, chat accepts "work": one of the two unread counts.
            try bench.send([
                Events.notification("e-1", user: "u-exp", criteria: "work"),
                Events.notification("e-2", user: "u-exp", criteria: "home"),
            ])
            // A record is published when the badge changes: the silenced one changes only `unread`.
            let before = try await badge { $0["badge"] as? Int == 1 }
            #expect(before["focus"] as? String == "Work")
            try await instance.waitUntil(
                { instance.metric("focusgate_events_consumed_total") == 2 }, what: "both notifications consumed")

            // Two hours later by the gateway's clock: the Focus expired, no message says so.
            clock.advance(by: .seconds(7200))
            let after = try await badge { $0["badge"] as? Int == 2 }
            #expect(after["focus"] is NSNull && after["unread"] as? Int == 2)
            #expect((after["sequence"] as? Int ?? 0) > (before["sequence"] as? Int ?? 0))
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("logs at trace level are JSON lines with dotted metadata and never contain a payload body")
        func logsCarryNoPayloads() async throws {
            let lines = Mutex<[String]>([])
            var logger = Logger(label: "focusgate") {
                JSONLogHandler(label: $0) { line in lines.withLock { $0.append(line) } }
            }
            logger.logLevel = .trace
            let bench = try await GatewayBench()
            let marker = "PAYLOAD-BODY-7f3a"
            let instance = try await InProcessGateway(bench, configuration: bench.configuration(), logger: logger)
            try await bench.put(Self.context("u-1", version: 1))
            try bench.send([
                Events.apns("n-1", user: "u-1", criteria: "\(marker)-criteria"),
                ("u-1", #"{"id":"n-2","userId":"u-1","appId":"chat","aps":{"alert":"\#(marker)"}}"#),
                ("u-1", #"{"id":"n-3","userId":"u-1","appId":"chat","payload":"\#(marker)"#),
                ("u-1", #"{"id":"\#(marker)","userId":5,"appId":"chat"}"#),
                ("u-2", #"{"id":"n-4","userId":"u-1","appId":"chat","secret":"\#(marker)"}"#),
            ])
            try await bench.waitForOutputs(5)
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.invalidations, records: [("u-1", "\(marker) not json")])
            try await instance.waitUntil(
                { instance.metric("focusgate_invalidations_total", labels: #"kind="invalid""#) >= 1 },
                what: "the invalid invalidation handled")
            try await instance.stop()
            let logged = lines.withLock { $0 }
            #expect(logged.count > 5, "the gateway logged its life cycle")
            for line in logged {
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["ts"] is String && object?["level"] is String && object?["msg"] is String, "\(line)")
                #expect(!line.contains(marker), "a payload reached the log: \(line)")
            }
            #expect(logged.contains { $0.contains("\"kafka.partitions\"") }, "metadata keys are dotted and kept")
            await bench.shutdown()
        }
    }
}
