import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateHarness
import FocusGateThreads
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

extension ServeProcess {
    /// `focusgate serve` against the test's embedded broker and store, with fast group settings.
    convenience init(
        _ bench: GatewayBench, adminPort: UInt16? = nil, logLevel: String? = nil,
        environment extra: [String: String] = [:]
    ) async throws {
        var environment = [
            "FOCUSGATE_DELIVERY_COMMITGROUPOFFSETS": bench.isEmbedded ? "true" : "false",
            "FOCUSGATE_COMMIT_INTERVALMS": "100",
            "FOCUSGATE_LIMITS_MAXEVENTBYTES": "2048",
            "FOCUSGATE_KAFKA_PROPERTIES_SESSION_TIMEOUT_MS": "6000",
            "FOCUSGATE_KAFKA_PROPERTIES_HEARTBEAT_INTERVAL_MS": "500",
        ]
        // Metadata refreshed every second only where a test moves partition leaders, as the
        // in-process clients do.
        for (property, value) in KafkaTestSupport.metadataRefresh(bench.cluster) {
            environment[
                "FOCUSGATE_KAFKA_PROPERTIES_" + property.uppercased().replacingOccurrences(of: ".", with: "_")] =
                value
        }
        // librdkafka's own debug contexts (e.g. `cgrp`), in the instance's log.
        if let contexts = ProcessInfo.processInfo.environment["FOCUSGATE_TEST_KAFKA_DEBUG"] {
            environment["FOCUSGATE_KAFKA_PROPERTIES_DEBUG"] = contexts
        }
        try await self.init(
            executable: Self.siblingExecutable, bootstrapServers: bench.bootstrapServers,
            databasePath: bench.databasePath,
            logLevel: logLevel ?? ProcessInfo.processInfo.environment["FOCUSGATE_TEST_SERVE_LOG"] ?? "warning",
            environment: environment.merging(extra) { $1 },
            adminPort: adminPort
        )
    }
}

extension EmbeddedBrokerTests {
    /// Restarts of `focusgate serve` mid-stream, audited over every output topic.
    @Suite("Gateway restarts, audited")
    struct GatewayRestartTests {
        /// 50 users, unique notification ids, a read every 10th record, 1% bad records.
        static func stream(_ count: Int) -> [(key: String?, value: String)] {
            (0..<count).map { index in
                let user = "u-\(index % 50)"
                if index % 100 == 99 { return (user, "bad-\(index) {") }
                if index % 10 == 9 {
                    return Events.read("r-\(index)", user: user, ids: ["e-\(index - 50)", "e-\(index - 100)"])
                }
                return index % 3 == 0
                    ? Events.apns("e-\(index)", user: user, app: "app-\(index % 4)", criteria: "c-\(index % 7)")
                    : Events.notification("e-\(index)", user: user, app: "app-\(index % 4)", criteria: "c-\(index % 7)")
            }
        }

        /// Ids the outputs must account for: notifications by id, bad records by value.
        static func outputIDs(_ records: [(key: String?, value: String)]) -> [String] {
            records.compactMap { record in
                if record.value.hasPrefix("bad-") { return record.value }
                return record.value.contains(#""type":"read""#)
                    ? nil
                    : Audit.id(
                        of: KafkaMessage(
                            topic: "", partition: 0, offset: 0, key: nil, value: Array(record.value.utf8), headers: [],
                            timestamp: nil))
            }
        }

        /// Produces `records` in chunks from a thread of its own while the gateway runs.
        static func produceInBackground(_ bench: GatewayBench, _ records: [(key: String?, value: String)], chunks: Int)
            -> Task<Void, any Error>
        {
            let chunkSize = (records.count + chunks - 1) / chunks
            let values = records.map { [$0.key ?? "", $0.value] }
            return Task {
                try await DedicatedThread.run(name: "test-producer") {
                    for start in stride(from: 0, to: values.count, by: chunkSize) {
                        let chunk = values[start..<min(start + chunkSize, values.count)].map {
                            (key: Optional($0[0]), value: $0[1])
                        }
                        try bench.send(chunk)
                        Thread.sleep(forTimeInterval: 0.1)  // pacing: the input arrives as a stream
                    }
                }
            }
        }

        /// Checks that every expected id came out and that each repeated output came from an input
        /// at or past its partition's offset in `pastOffsets` (the group's offsets when the first
        /// instance was killed); returns the number of repeated outputs.
        static func repeats(in audit: Audit, expected: [String], pastOffsets: [Int32: Int64]) -> Int {
            let outputs = audit.outputsByID
            #expect(Set(outputs.keys) == Set(expected), "nothing lost")
            var duplicates = 0
            for (id, messages) in outputs where messages.count > 1 {
                duplicates += messages.count - 1
                for message in messages {
                    let source = (message.header("focusgate-source") ?? "").split(separator: "/")
                    let partition = Int32(source.dropLast().last ?? "") ?? -1
                    let offset = Int64(source.last ?? "") ?? -1
                    #expect(offset >= pastOffsets[partition] ?? 0, "\(id) repeated from before the group's offset")
                }
            }
            return duplicates
        }

        @Test("stopped gracefully mid-stream and restarted: every input exactly once, badges continue")
        func gracefulRestart() async throws {
            let bench = try await GatewayBench()
            let records = Self.stream(3000)
            let expectedIDs = Self.outputIDs(records)

            let first = try await ServeProcess(bench)
            #expect(try await first.waitUntilReady())
            // Produced only once the instance owns the partitions (the embedded broker's first join
            // takes seconds): records flow through it while it stops, rather than wait as a backlog.
            #expect(try await first.waitUntilAssigned())
            let producing = Self.produceInBackground(bench, records, chunks: 30)
            try await first.waitForConsumed(900)
            #expect(await first.stop(SIGTERM) == 0, "a graceful stop exits 0")
            let committed = try bench.committedOffsets()
            try await producing.value
            print(
                "graceful audit: \(records.count) records, committed at the stop \(committed.sorted { $0.key < $1.key }.map(\.value))"
            )
            #expect(committed.values.reduce(0, +) < Int64(records.count), "stopped mid-stream")

            let second = try await ServeProcess(bench)
            #expect(try await second.waitUntilReady())
            let audit = try await bench.settled(records: records.count)
            let outputs = audit.outputsByID
            #expect(Set(outputs.keys) == Set(expectedIDs), "every input accounted for")
            let repeated = outputs.filter { $0.value.count != 1 }
            #expect(repeated.isEmpty, "exactly once: \(repeated.count) ids repeated, e.g. \(repeated.keys.prefix(3))")
            #expect(audit.finalBadges == Events.expectedBadges(records), "badges continue from the restored state")
            #expect(await second.stop(SIGTERM) == 0)
            await bench.shutdown()
        }

        @Test(
            "restarted after a clean stop against a long-lived broker, as a user runs it: the first output comes within 5 s of the start"
        )
        func restartResumesFast() async throws {
            let bench = try await GatewayBench()
            // No group settings of the tests: serve recognises the embedded broker by its cluster id.
            func start() async throws -> ServeProcess {
                try await ServeProcess(
                    executable: ServeProcess.siblingExecutable, bootstrapServers: bench.bootstrapServers,
                    databasePath: bench.databasePath)
            }
            let committed = #"focusgate_transactions_total{result="committed"}"#
            let first = try await start()
            #expect(try await first.waitUntilAssigned())
            try bench.send((0..<20).map { Events.notification("before-\($0)", user: "u-\($0 % 5)", criteria: "work") })
            try await first.waitForConsumed(20)
            #expect(try await first.waitForMetric(committed, atLeast: 1))
            #expect(await first.stop(SIGTERM) == 0, "a graceful stop exits 0")
            // A backlog waits for the next instance.
            try bench.send((0..<20).map { Events.notification("after-\($0)", user: "u-\($0 % 5)", criteria: "work") })

            let started = ContinuousClock.now
            let second = try await start()
            try await Wait.until("the restarted instance's first committed output", timeout: .seconds(60)) {
                await second.metric(committed) >= 1
            }
            let firstOutput = ContinuousClock.now - started
            print("restart: first committed output \(firstOutput) after the start")
            #expect(firstOutput <= .seconds(5), "a restart resumes within 5 s (took \(firstOutput))")
            let audit = try await bench.settled(records: 40)
            #expect(audit.distinctIDs == 40, "every input accounted for")
            #expect(await second.stop(SIGTERM) == 0)
            await bench.shutdown()
        }

        @Test("a fenced producer is fatal: serve stops with a clear log line and a non-zero exit status")
        func fencedIsFatal() async throws {
            let bench = try await GatewayBench()
            let serve = try await ServeProcess(bench)
            #expect(try await serve.waitUntilReady())
            try bench.broker.pushRequestErrors(.endTransaction, [KafkaError.Code(rawValue: 90)])  // PRODUCER_FENCED
            try bench.send([Events.notification("n-1", user: "u-1", criteria: "work")])
            #expect(await serve.exitStatus() == 1, "the instance stops by itself")
            let log = serve.standardError
            #expect(
                log.contains("critical") && log.contains("fatal Kafka error") && log.contains("fenced"),
                "\(log.suffix(2000))")
            await bench.shutdown()
        }

        @Test("killed with SIGKILL mid-stream and restarted: nothing lost; duplicates only from the uncommitted window")
        func killedRestart() async throws {
            let bench = try await GatewayBench()
            let records = Self.stream(3000)
            let expectedIDs = Self.outputIDs(records)

            // A long commit interval, so that the kill lands inside an open transaction: right
            // after the first commit, once 300 more records went through, while records still
            // arrive (produced over 6 s, from the moment the instance owns the partitions).
            let first = try await ServeProcess(bench, environment: ["FOCUSGATE_COMMIT_INTERVALMS": "2000"])
            #expect(try await first.waitUntilReady())
            #expect(try await first.waitUntilAssigned())
            let producing = Self.produceInBackground(bench, records, chunks: 60)
            let commits = #"focusgate_transactions_total{result="committed"}"#
            #expect(try await first.waitForMetric(commits, atLeast: 1, timeout: .seconds(30)))
            try await first.waitForConsumed(await first.metric("focusgate_events_consumed_total") + 300)
            #expect(await first.stop(SIGKILL) == SIGKILL)
            let committedAtKill = try bench.committedOffsets()
            try await producing.value

            let second = try await ServeProcess(bench)
            #expect(try await second.waitUntilReady())
            let audit = try await bench.settled(records: records.count)
            let duplicates = Self.repeats(in: audit, expected: expectedIDs, pastOffsets: committedAtKill)
            print(
                "SIGKILL audit: \(expectedIDs.count) inputs, committed at the kill \(committedAtKill.sorted { $0.key < $1.key }.map(\.value)), \(duplicates) duplicate outputs from the uncommitted window"
            )
            #expect(duplicates > 0, "the kill landed inside an open transaction, whose outputs the replay repeats")
            #expect(committedAtKill.values.reduce(0, +) > 0, "a transaction committed before the kill")
            #expect(audit.finalBadges == Events.expectedBadges(records), "badges equal a recomputation from the inputs")
            #expect(await second.stop(SIGTERM) == 0)
            await bench.shutdown()
        }

        @Test(
            "at-least-once, killed while the group refuses offsets after their outputs and state were delivered: the restart starts from the group's offset with the state as of it; nothing lost, badges exact"
        )
        func killedWithOffsetsDeferred() async throws {
            let bench = try await GatewayBench()
            let records = Self.stream(3000)
            let expectedIDs = Self.outputIDs(records)

            let first = try await ServeProcess(bench, environment: ["FOCUSGATE_DELIVERY_MODE": "at-least-once"])
            #expect(try await first.waitUntilReady())
            #expect(try await first.waitUntilAssigned())
            let producing = Self.produceInBackground(bench, records, chunks: 60)
            let commits = #"focusgate_transactions_total{result="committed"}"#
            #expect(try await first.waitForMetric(commits, atLeast: 1, timeout: .seconds(30)))
            // From here the group refuses every offset commit (REBALANCE_IN_PROGRESS) while
            // outputs, changelog records and their commit markers keep being delivered.
            try bench.broker.pushRequestErrors(
                .offsetCommit, Array(repeating: KafkaError.Code(rawValue: 27), count: 1000))
            let deferred = "focusgate_offset_commits_deferred_total"
            #expect(try await first.waitForMetric(deferred, atLeast: 3, timeout: .seconds(30)))
            try await first.waitForConsumed(await first.metric("focusgate_events_consumed_total") + 300)
            #expect(await first.metric("focusgate_replayed_records_total") == 0, "refused offsets replay nothing")
            #expect(await first.stop(SIGKILL) == SIGKILL)
            let committedAtKill = try bench.committedOffsets()
            try bench.broker.clearRequestErrors(.offsetCommit)
            try await producing.value

            let second = try await ServeProcess(bench, environment: ["FOCUSGATE_DELIVERY_MODE": "at-least-once"])
            #expect(try await second.waitUntilReady())
            // A restart's rare stall shows its cause in the tails of the `serve` logs.
            let audit = try await bench.settled(records: records.count) {
                [("the killed", first), ("the restarted", second)].map {
                    "\($0.0) serve's log:\n\($0.1.standardError.suffix(8000))"
                }.joined(separator: "\n")
            }
            let duplicates = Self.repeats(in: audit, expected: expectedIDs, pastOffsets: committedAtKill)
            print(
                "deferred-offsets SIGKILL audit: \(expectedIDs.count) inputs, group's offsets at the kill \(committedAtKill.sorted { $0.key < $1.key }.map(\.value)), \(duplicates) duplicate outputs"
            )
            #expect(duplicates > 0, "the restart replayed what the group's offsets had not reached")
            #expect(audit.finalBadges == Events.expectedBadges(records), "badges equal a recomputation from the inputs")
            #expect(await second.stop(SIGTERM) == 0)
            await bench.shutdown()
        }
    }
}
