import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateThreads
import Foundation
import Testing

extension EmbeddedBrokerTests {
    /// What a worker takes from the state changelog when partitions arrive.
    @Suite("State restore")
    struct StateRestoreTests {
        typealias Record = (key: [UInt8]?, value: [UInt8]?, headers: [KafkaHeader])

        /// The changelog records a commit as of input offset `asOf` writes after `unread`
        /// notifications of app `chat` per user (`nil`: without the `as-of` header, as written
        /// before records carried it).
        static func changes(
            _ state: inout PartitionState, users: some Sequence<String>, unread: Int, from first: Int = 0,
            asOf: Int64?
        ) -> [Record] {
            for user in users {
                for index in first..<(first + unread) {
                    _ = state.apply(
                        NotificationEvent(id: "n-\(index)", userID: user, appID: "chat"), lookup: .available(nil),
                        // Now: decided longer ago than `state.retentionMs`, the restored gateway would forget them.
                        nowMilliseconds: SystemWallClock().nowMilliseconds()
                    )
                }
            }
            let headers = asOf.map {
                [KafkaHeader(name: PartitionState.asOfHeader, value: PartitionState.commitMarkerValue(through: $0))]
            }
            var records: [Record] = []
            state.writeChanges { key, value in records.append((key, value, headers ?? [])) }
            state.commit()
            return records
        }

        /// Writes `batches` record batches of 20 users each (one produce call each) to changelog
        /// partition `partition`, then a marker, and slows the broker down so that the restore
        /// fetches them one at a time, 150 ms apart; returns the configuration that does so.
        /// (`setRoundTripTime(.zero, broker: 1)` ends it.)
        static func slowChangelog(_ bench: GatewayBench, batches: Int, partition: Int32) throws
            -> GatewayConfiguration
        {
            var state = PartitionState()
            for batch in 0..<batches {
                let records = Self.changes(
                    &state, users: (0..<20).lazy.map { "u-\(batch)-\($0)" }, unread: 1, asOf: 0)
                _ = try KafkaTestSupport.produce(
                    bench.cluster, topic: bench.topics.state, headed: records, partition: partition)
            }
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.state, headed: [Self.marker(through: 0)], partition: partition)
            var configuration = bench.configuration()
            configuration.kafkaProperties["max.partition.fetch.bytes"] = "64"
            try bench.broker.setRoundTripTime(.milliseconds(150), broker: 1)
            return configuration
        }

        static func marker(through offset: Int64) -> Record {
            (PartitionState.commitMarkerKey, PartitionState.commitMarkerValue(through: offset), [])
        }

        /// A commit's records: the changes of `unread` notifications to `user`, then the marker.
        /// `headed`: the records carry the `as-of` header, as a worker writes them.
        static func commit(
            _ state: inout PartitionState, user: String, unread: Int, from first: Int = 0, through offset: Int64,
            headed: Bool = true
        ) -> [Record] {
            Self.changes(&state, users: [user], unread: unread, from: first, asOf: headed ? offset : nil)
                + [Self.marker(through: offset)]
        }

        /// The unread count of `user`'s app `chat` in `instance`'s committed state; `nil` when none.
        static func unread(_ instance: InProcessGateway, _ user: String) async -> Int? {
            await instance.gateway.directory.held(userID: user).first { $0.appID == "chat" }?.unread
        }

        /// Commits offset `offset` of input partition `partition` for the gateway's group.
        static func commitInput(_ bench: GatewayBench, offset: Int64, partition: Int32 = 0) throws {
            let filler = [(key: String?, value: String?)](repeating: ("u-filler", "not json"), count: Int(offset))
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: filler, partition: partition)
            let committer = try KafkaConsumer(
                configuration: KafkaTestSupport.consumerConfiguration(bench.broker, group: "focusgate"),
                logger: KafkaTestSupport.logger)
            try committer.commit([
                KafkaTopicPartition(topic: bench.topics.notifications, partition: partition, offset: offset)
            ])
            committer.close()
            #expect(try bench.committedOffsets()[partition] == offset)
        }

        /// Joins the gateway's group as a second member (the one partition stays the gateway's),
        /// commits offset `offset` of input partition 0 as a member may, as a previous owner's
        /// late commit lands, and leaves. The input gets `offset` filler records first.
        static func commitAsMember(_ bench: GatewayBench, offset: Int64) async throws {
            let filler = [(key: String?, value: String?)](repeating: ("u-filler", "not json"), count: Int(offset))
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: filler, partition: 0)
            let topic = bench.topics.notifications
            let configuration = KafkaTestSupport.consumerConfiguration(bench.broker, group: "focusgate")
            try await DedicatedThread.run(name: "late-committer") {
                final class Joined { var value = false }
                let joined = Joined()
                let member = try KafkaConsumer(
                    configuration: configuration, logger: KafkaTestSupport.logger,
                    onRebalance: { if case .assigned = $0 { joined.value = true } })
                try member.subscribe([topic])
                let deadline = ContinuousClock.now + .seconds(60)
                while !joined.value {
                    guard ContinuousClock.now < deadline else {
                        throw KafkaError(code: .timedOut, message: "no group join within 60 s")
                    }
                    member.consumeBatch(maxRecords: 10, timeout: .milliseconds(100)) { _ in }
                }
                try member.commit([KafkaTopicPartition(topic: topic, partition: 0, offset: offset)])
                member.close()
            }
            #expect(try bench.committedOffsets()[0] == offset)
        }

        /// Writes each changelog partition's records, commits its input partition's offset (none
        /// when `nil`), and starts an instance; returns it once it owns every partition (their
        /// state restored).
        static func restored(
            _ bench: GatewayBench, _ partitions: [(partition: Int32, records: [Record], committed: Int64?)]
        ) async throws -> InProcessGateway {
            for (partition, records, committed) in partitions {
                let outcomes = try KafkaTestSupport.produce(
                    bench.cluster, topic: bench.topics.state, headed: records, partition: partition)
                #expect(outcomes.allSatisfy { $0.error == nil })
                if let committed { try Self.commitInput(bench, offset: committed, partition: partition) }
            }
            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            try await instance.waitUntil { instance.gateway.assignedPartitions == bench.partitions }
            return instance
        }

        @Test(
            "changes closed by a marker within the committed input offset are taken; past it, or with no marker, skipped"
        )
        func uncommittedStateSkipped() async throws {
            let bench = try await GatewayBench()
            // Changelog partition 0, as an abort on the embedded broker leaves it (no abort markers):
            // committed changes, then changes of transactions whose offsets never committed. The
            // records carry no `as-of` header, as before records said which commit they belong to.
            var state = PartitionState()
            var records = Self.commit(&state, user: "u-committed", unread: 1, through: 12, headed: false)
            records += Self.commit(&state, user: "u-committed", unread: 2, from: 1, through: 20, headed: false)
            records += Self.commit(&state, user: "u-only-uncommitted", unread: 4, through: 13, headed: false)
            records += Self.changes(&state, users: ["u-cut-short"], unread: 2, asOf: nil)
            let instance = try await Self.restored(bench, [(0, records, 12)])
            #expect(await Self.unread(instance, "u-committed") == 1, "the later changes (through 20 > 12) were skipped")
            #expect(await Self.unread(instance, "u-only-uncommitted") == nil, "no committed state at all")
            #expect(
                await Self.unread(instance, "u-cut-short") == nil,
                "changes with no marker after them are a commit cut short")
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "with no committed input offset the state is as of the input's beginning: a group marked past it (a transaction that aborted, which the embedded broker shows) is skipped"
        )
        func noCommittedOffset() async throws {
            let bench = try await GatewayBench()
            // Changelog partition 0 as the first member's aborted commits leave it on the embedded
            // broker, before any offset of the group was committed: taken, the aborted state made
            // the next member read the input again as duplicates and commit offsets with no state.
            var state = PartitionState()
            var records = Self.commit(&state, user: "u-at-start", unread: 1, through: 0)
            records += Self.commit(&state, user: "u-aborted", unread: 3, through: 156)
            // No offset of the group is committed: the instance starts at the input's beginning.
            let instance = try await Self.restored(bench, [(0, records, nil)])
            #expect(await Self.unread(instance, "u-at-start") == 1, "a marker at the input's beginning is within it")
            #expect(
                await Self.unread(instance, "u-aborted") == nil,
                "marked past the beginning: its offsets never committed")
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "a group written after the state of newer input is skipped though within the committed offset; an aborted group before its replay is applied"
        )
        func lateStateSkipped() async throws {
            let bench = try await GatewayBench()
            // Partition 0: the member that lost the partition commits its processing of the input
            // after offset 10 late, after the new owner's commit of the same input through 30.
            var state = PartitionState()
            var records = Self.commit(&state, user: "u-late", unread: 1, through: 10)
            var lostMember = state
            records += Self.commit(&state, user: "u-late", unread: 2, from: 1, through: 30)
            records += Self.commit(&lostMember, user: "u-late", unread: 1, from: 100, through: 20)
            // Partition 1: an aborted transaction through 40, then its replay committed in two
            // transactions through 20 and 50.
            var replayed = PartitionState()
            var replay = Self.commit(&replayed, user: "u-replayed", unread: 1, through: 10)
            var aborted = replayed
            replay += Self.commit(&aborted, user: "u-replayed", unread: 2, from: 1, through: 40)
            replay += Self.commit(&replayed, user: "u-replayed", unread: 1, from: 1, through: 20)
            replay += Self.commit(&replayed, user: "u-replayed", unread: 2, from: 2, through: 50)
            let instance = try await Self.restored(bench, [(0, records, 30), (1, replay, 50)])
            let late = await instance.gateway.directory.held(userID: "u-late")
            #expect(
                late == [Badge(appID: "chat", badge: 3, unread: 3, sequence: 3)], "the late group (20 < 30) skipped")
            let replayedBadges = await instance.gateway.directory.held(userID: "u-replayed")
            #expect(
                replayedBadges == [Badge(appID: "chat", badge: 4, unread: 4, sequence: 4)], "every notification once")
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "an aborted commit's records without their marker are not taken with the next writer's commit; taken in order once a later marker covers them"
        )
        func separatedRecordsKeptApart() async throws {
            let bench = try await GatewayBench()
            // Partition 0: a member's transaction through 40 aborted while its marker was still
            // queued (the embedded broker keeps the records it had sent); the partition's next
            // owner replays from 10 and commits through 20, its records after the aborted ones.
            var state = PartitionState()
            var records = Self.commit(&state, user: "u-split", unread: 1, through: 10)
            var nextOwner = state
            records += Self.changes(&state, users: ["u-split"], unread: 4, from: 1, asOf: 40)
            records += Self.commit(&nextOwner, user: "u-split", unread: 1, from: 1, through: 20)
            // Partition 1: the same, and the next owner goes on to commit through 50, past the
            // aborted records' offset.
            var later = PartitionState()
            var laterRecords = Self.commit(&later, user: "u-covered", unread: 1, through: 10)
            var laterOwner = later
            laterRecords += Self.changes(&later, users: ["u-covered"], unread: 4, from: 1, asOf: 40)
            laterRecords += Self.commit(&laterOwner, user: "u-covered", unread: 1, from: 1, through: 20)
            laterRecords += Self.commit(&laterOwner, user: "u-covered", unread: 4, from: 2, through: 50)
            let instance = try await Self.restored(bench, [(0, records, 20), (1, laterRecords, 50)])
            // Taken with the commit through 20, the aborted records would have brought n-2…n-4 in
            // as unread (the consumer, starting at 20, would then take them for duplicates and
            // the app's sequence would stay behind its badge).
            #expect(
                await instance.gateway.directory.held(userID: "u-split")
                    == [Badge(appID: "chat", badge: 2, unread: 2, sequence: 2)])
            #expect(
                await instance.gateway.directory.held(userID: "u-covered")
                    == [Badge(appID: "chat", badge: 6, unread: 6, sequence: 6)])
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "records written before the as-of header, then with it, as an upgrade leaves them: each commit taken once")
        func upgradeMixesForms() async throws {
            let bench = try await GatewayBench()
            var state = PartitionState()
            var records = Self.commit(&state, user: "u-upgraded", unread: 2, through: 10, headed: false)
            records += Self.commit(&state, user: "u-upgraded", unread: 1, from: 2, through: 20)
            // An instance of the earlier version, still running in the rolling upgrade, past the
            // committed offset: skipped.
            records += Self.commit(&state, user: "u-upgraded", unread: 1, from: 3, through: 30, headed: false)
            let instance = try await Self.restored(bench, [(0, records, 20)])
            #expect(
                await instance.gateway.directory.held(userID: "u-upgraded")
                    == [Badge(appID: "chat", badge: 3, unread: 3, sequence: 3)])
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("a worker's commits write each changelog record with the as-of header of the marker that closes it")
        func commitsWriteAsOf() async throws {
            let bench = try await GatewayBench()
            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            try await instance.waitUntil { instance.gateway.assignedPartitions == bench.partitions }
            let records = (0..<200).map { Events.notification("n-\($0)", user: "u-\($0 % 20)") }
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: records.map { ($0.key, $0.value) })
            try await instance.waitUntil(
                { ((try? bench.committedOffsets()) ?? [:]).values.reduce(0, +) == Int64(records.count) },
                what: "every input committed")
            var pending: [Int32: [Int64?]] = [:]
            var closed = 0
            for record in try bench.readAll(bench.topics.state) {
                let key = record.key ?? []
                if key == PartitionState.commitMarkerKey {
                    // The marker's value has the header's form.
                    let through = try #require(
                        record.value.flatMap { value in
                            value.withUnsafeBytes { PartitionState.asOfOffset($0) }
                        })
                    #expect(
                        pending[record.partition, default: []].allSatisfy { $0 == through },
                        "partition \(record.partition)")
                    closed += pending[record.partition, default: []].count
                    pending[record.partition] = []
                } else {
                    let asOf = record.headers.last { $0.name == PartitionState.asOfHeader }?.value.flatMap { value in
                        value.withUnsafeBytes { PartitionState.asOfOffset($0) }
                    }
                    pending[record.partition, default: []].append(asOf)
                }
            }
            #expect(closed >= 20, "every user's changes were written and closed")
            #expect(pending.values.allSatisfy { $0.isEmpty }, "no record after the last marker")
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("a record of the first state form stops the worker with a message that says what to do")
        func legacyStateRefused() async throws {
            let bench = try await GatewayBench(partitions: 1)
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.state, bytes: [(Array("u-old".utf8), [1, 0, 0])], partition: 0)
            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            let error = try #require(await instance.finished())
            #expect("\(error)".contains("first state form"), "\(error)")
            await bench.shutdown()
        }

        @Test("a restore that keeps progressing is not cut off, however long it takes in all")
        func slowRestoreProgresses() async throws {
            let bench = try await GatewayBench(partitions: 1)
            // A restore of about 6 s that makes progress every fetch.
            var configuration = try Self.slowChangelog(bench, batches: 40, partition: 0)
            // Twice this, 2 s, was once the whole restore's deadline.
            configuration.operationTimeout = .seconds(1)
            let started = ContinuousClock.now
            let instance = try await InProcessGateway(bench, configuration: configuration)
            try await instance.waitUntil({ instance.gateway.assignedPartitions == 1 }, timeout: .seconds(60))
            let took = ContinuousClock.now - started
            try bench.broker.setRoundTripTime(.zero, broker: 1)
            #expect(took > .seconds(2), "the restore outlasted the old deadline (\(took))")
            #expect(await instance.gateway.directory.held(userID: "u-39-19").map(\.unread) == [1])
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("a partition being restored holds up no other, and readiness says a restore runs")
        func othersFlowWhileOneRestores() async throws {
            let bench = try await GatewayBench(partitions: 2)
            // Partition 1's restore takes 15 s or more; partition 0's changelog is empty.
            let configuration = try Self.slowChangelog(bench, batches: 100, partition: 1)
            let instance = try await InProcessGateway(bench, configuration: configuration)
            try await instance.waitUntil({ instance.gateway.assignedPartitions == 1 }, timeout: .seconds(60))
            #expect(instance.gateway.readinessChecks["restore"] == false)
            let notification = Events.notification("n-p0", user: "u-p0")
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: [(notification.key, notification.value)],
                partition: 0)
            _ = try await bench.waitForOutputs(1)
            // Without the restore beside the loop, partition 0 took nothing until partition 1 was restored.
            #expect(instance.gateway.assignedPartitions == 1, "partition 1 was still being restored")
            #expect(instance.gateway.readinessChecks["restore"] == false)
            try bench.broker.setRoundTripTime(.zero, broker: 1)
            // The worker counts a partition in before it notes that no restore is left: the two are
            // seen apart for a moment, so the wait is for both.
            try await instance.waitUntil(
                {
                    instance.gateway.assignedPartitions == 2 && instance.gateway.readinessChecks["restore"] == true
                }, timeout: .seconds(60), what: "partition 1 restored and readiness saying no restore runs")
            #expect(await instance.gateway.directory.held(userID: "u-99-19").map(\.unread) == [1])
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "at-least-once, a commit in use that fails while another partition restores: both partitions are consumed afterwards"
        )
        func restoreFromGroupBesideARestore() async throws {
            let bench = try await GatewayBench(partitions: 2)
            // Partition 1's restore takes 15 s or more; partition 0's changelog is empty.
            var configuration = try Self.slowChangelog(bench, batches: 100, partition: 1)
            configuration.deliveryMode = .atLeastOnce
            let first = Events.notification("n-p0", user: "u-p0")
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: [(first.key, first.value)], partition: 0)
            // The gateway's first Produce request is refused for good 1 s late: its commit is in use
            // by then, and the worker restores partition 0 again while partition 1's restore runs.
            try bench.broker.pushRequestErrors(
                broker: 1, .produce, [(error: KafkaError.Code(rawValue: 87), delay: .seconds(1))])
            let instance = try await InProcessGateway(bench, configuration: configuration)
            try await instance.waitUntil(
                { instance.recentLog.text.contains("records of a commit in use were not delivered") },
                timeout: .seconds(60), what: "the failed commit in use")
            try bench.broker.setRoundTripTime(.zero, broker: 1)
            try await instance.waitUntil({ instance.gateway.assignedPartitions == 2 }, timeout: .seconds(60))
            // Restored while the worker waited for its own restore, partition 1 is fetched too.
            let second = Events.notification("n-p1", user: "u-p1")
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: [(second.key, second.value)], partition: 1)
            _ = try await bench.waitForOutputs(2)
            #expect(await instance.gateway.directory.held(userID: "u-99-19").map(\.unread) == [1])
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("a group offset that moves while the partition is restored has it restored again as of the new one")
        func offsetMovesDuringRestore() async throws {
            let bench = try await GatewayBench(partitions: 1)
            let configuration = try Self.slowChangelog(bench, batches: 40, partition: 0)
            // The previous owner's last commit: state as of input offset 5, its offset landing late.
            var late = PartitionState()
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.state,
                headed: Self.commit(&late, user: "u-late", unread: 2, through: 5), partition: 0)
            let instance = try await InProcessGateway(bench, configuration: configuration)
            try await instance.waitUntil(
                { instance.gateway.readinessChecks["restore"] == false }, timeout: .seconds(60))
            #expect(instance.gateway.assignedPartitions == 0, "the restore runs")
            try await Self.commitAsMember(bench, offset: 5)
            try bench.broker.setRoundTripTime(.zero, broker: 1)
            try await instance.waitUntil({ instance.gateway.assignedPartitions == 1 }, timeout: .seconds(60))
            // Restored as of 0 and started at 5, the partition would lack u-late's commit.
            #expect(await Self.unread(instance, "u-late") == 2)
            let notification = Events.notification("n-after", user: "u-late")
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: [(notification.key, notification.value)],
                partition: 0)
            try await instance.waitUntil { instance.metric("focusgate_events_consumed_total") >= 1 }
            #expect(instance.metric("focusgate_events_consumed_total") == 1, "started at 5, not at the restore's 0")
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("under eager rebalancing, which cannot hold partitions back, the hook waits for the restore")
        func eagerRebalancingWaits() async throws {
            let bench = try await GatewayBench(partitions: 1)
            // A restore of some seconds: the input's records would be fetched long before it ends.
            var configuration = try Self.slowChangelog(bench, batches: 20, partition: 0)
            var state = PartitionState()
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.state,
                headed: Self.commit(&state, user: "u-eager", unread: 2, through: 0), partition: 0)
            // In the input before the partition is assigned: taken only once the state is there.
            // The restored dedupe window holds n-1: a duplicate; n-2 is new.
            let records = [Events.notification("n-1", user: "u-eager"), Events.notification("n-2", user: "u-eager")]
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications, records: records.map { ($0.key, $0.value) },
                partition: 0)
            configuration.kafkaProperties["partition.assignment.strategy"] = "range"
            let instance = try await InProcessGateway(bench, configuration: configuration)
            try await instance.waitUntil(
                { instance.metric("focusgate_events_consumed_total") >= 2 }, timeout: .seconds(60))
            #expect(instance.metric("focusgate_duplicates_total") == 1)
            #expect(instance.gateway.readinessChecks["restore"] == true)
            try bench.broker.setRoundTripTime(.zero, broker: 1)
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("100,000 users with history are restored: badges, unread and dedupe windows")
        func restoreAtScale() async throws {
            let partitions = 8
            let usersPerPartition = 12_500
            let bench = try await GatewayBench(partitions: partitions)
            for partition in 0..<partitions {
                var state = PartitionState()
                var records = Self.changes(
                    &state, users: (0..<usersPerPartition).lazy.map { "u-\(partition)-\($0)" }, unread: 3, asOf: 0)
                records.append(Self.marker(through: 0))
                let outcomes = try KafkaTestSupport.produce(
                    bench.cluster, topic: bench.topics.state, headed: records, partition: Int32(partition))
                #expect(outcomes.allSatisfy { $0.error == nil })
            }
            let started = ContinuousClock.now
            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            try await instance.waitUntil({ instance.gateway.assignedPartitions == partitions }, timeout: .seconds(60))
            let restoreTime = ContinuousClock.now - started
            #expect(instance.gateway.assignedPartitions == partitions)
            print("restored \(partitions * usersPerPartition) users in \(restoreTime)")
            for (partition, user) in [(0, 0), (3, 6_000), (7, usersPerPartition - 1)] {
                let badges = await instance.gateway.directory.held(userID: "u-\(partition)-\(user)")
                #expect(badges == [Badge(appID: "chat", badge: 3, unread: 3, sequence: 3)])
            }
            // A notification the window remembers is a duplicate; a new one is decided. Keys route
            // to partitions by hash, so the users are taken from where the key lands.
            let duplicate = Events.notification("n-1", user: "u-0-0")
            let fresh = Events.notification("n-new", user: "u-0-0")
            _ = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications,
                records: [duplicate, fresh].map { ($0.key, $0.value) },
                partition: 0)
            try await instance.waitUntil { instance.metric("focusgate_events_consumed_total") >= 2 }
            #expect(instance.metric("focusgate_duplicates_total") == 1)
            try await instance.stop()
            await bench.shutdown()
        }
    }
}
