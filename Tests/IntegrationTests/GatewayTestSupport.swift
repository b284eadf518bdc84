import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateStore
import Foundation
import Logging
import Prometheus
import Synchronization
import Testing

/// A cluster with FocusGate's topics (the embedded broker, or Tansu), a SQLite store, and ways
/// to feed and audit a gateway.
final class GatewayBench: Sendable {
    /// The cluster the test runs on.
    let cluster: any KafkaTestCluster
    private let embedded: EmbeddedKafkaBroker?
    let topics = TopicNames()
    let partitions: Int
    let databasePath: String
    let store: SQLiteContextStore

    /// On the embedded broker.
    convenience init(partitions: Int = 4, brokers: Int = 1) async throws {
        try await self.init(on: .embedded, partitions: partitions, brokers: brokers)
    }

    /// On `cluster`; `brokers` counts the embedded broker's brokers (Tansu runs one).
    init(on cluster: TestCluster, partitions: Int = 4, brokers: Int = 1) async throws {
        self.partitions = partitions
        let specifications = TopicNames().specifications(partitions: partitions)
        switch cluster {
        case .embedded:
            let broker = try EmbeddedKafkaBroker(
                brokerCount: brokers, topics: specifications, logger: KafkaTestSupport.logger)
            self.embedded = broker
            self.cluster = broker
        case .tansu:
            let executable = try #require(TansuBroker.executable, "FOCUSGATE_TEST_TANSU names Tansu's executable")
            let broker = try await TansuBroker(executable: executable)
            for specification in specifications { try await broker.create(specification) }
            self.embedded = nil
            self.cluster = broker
        }
        // In the scratch directory: a test that fails before its shutdown leaves nothing behind either.
        self.databasePath = ScratchDirectory.process.file("gateway", extension: "sqlite")
        self.store = try await SQLiteContextStore.open(path: self.databasePath, logger: KafkaTestSupport.logger)
    }

    /// The embedded broker, for a test of its faults or limits (one made with ``init(partitions:brokers:)``).
    var broker: EmbeddedKafkaBroker {
        guard let embedded = self.embedded else {
            preconditionFailure("a test of the embedded broker's own faults was given another cluster")
        }
        return embedded
    }

    var bootstrapServers: String { self.cluster.bootstrapServers }

    /// Whether the cluster is librdkafka's mock: its transactions store no offsets, write no
    /// markers, and leave aborted records visible.
    var isEmbedded: Bool { self.embedded != nil }

    func shutdown() async {
        await self.store.close()
        await self.cluster.stop()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: self.databasePath + suffix) }
    }

    /// Gateway settings for tests: fast group membership, short commit interval.
    func configuration(mode: GatewayConfiguration.DeliveryMode = .exactlyOnce) -> GatewayConfiguration {
        var configuration = GatewayConfiguration(bootstrapServers: self.bootstrapServers)
        configuration.deliveryMode = mode
        configuration.commitInterval = .milliseconds(100)
        // Only the embedded broker's transactions do not store the offsets sent with them.
        configuration.commitGroupOffsets = self.isEmbedded
        configuration.sessionTimeout = .seconds(6)
        configuration.kafkaProperties = self.clientProperties
        // librdkafka's own debug contexts (e.g. `cgrp,consumer`), logged at debug level
        // (`FOCUSGATE_TEST_LOG=debug`): to see a group's joins when a test waits for one.
        if let contexts = ProcessInfo.processInfo.environment["FOCUSGATE_TEST_KAFKA_DEBUG"] {
            configuration.kafkaProperties["debug"] = contexts
        }
        configuration.maxEventBytes = 2048
        return configuration
    }

    /// The gateway's client settings in tests: fast heartbeats, and the metadata refresh where
    /// leaders can move (``KafkaTestSupport/metadataRefresh(_:)``).
    var clientProperties: [String: String] {
        ["heartbeat.interval.ms": "500"].merging(KafkaTestSupport.metadataRefresh(self.cluster)) { $1 }
    }

    /// A configuration that replays the input from offset 0 with fresh state: another group, and
    /// output and state topics of its own (`<prefix>.delivered`, … created here).
    func replayConfiguration(prefix: String = "replay") throws -> GatewayConfiguration {
        var replay = self.configuration()
        replay.groupID = "focusgate-\(prefix)"
        replay.transactionalIDPrefix = prefix
        for name in ["delivered", "silenced", "badges", "state", "dlq", "status", "summaries"] {
            try self.broker.createTopic(KafkaTopicSpecification(name: "\(prefix).\(name)", partitions: self.partitions))
        }
        replay.topics.delivered = "\(prefix).delivered"
        replay.topics.silenced = "\(prefix).silenced"
        replay.topics.badges = "\(prefix).badges"
        replay.topics.state = "\(prefix).state"
        replay.topics.deadLetters = "\(prefix).dlq"
        replay.topics.status = "\(prefix).status"
        replay.topics.summaries = "\(prefix).summaries"
        return replay
    }

    // MARK: - Input

    /// Stores `context` and announces it inline on the invalidations topic.
    func put(_ context: FocusContext) async throws {
        _ = try await self.store.put(context)
        _ = try KafkaTestSupport.produce(
            self.cluster, topic: self.topics.invalidations,
            records: [(context.userID, String(decoding: ContextInvalidation.inlineValue(for: context), as: UTF8.self))]
        )
    }

    /// Produces notification-topic records (key, value) and checks every delivery.
    func send(_ records: [(key: String?, value: String)]) throws {
        let outcomes = try KafkaTestSupport.produce(
            self.cluster, topic: self.topics.notifications, records: records.map { ($0.key, $0.value) })
        #expect(outcomes.count == records.count && outcomes.allSatisfy { $0.error == nil })
    }

    /// Produces notification-topic records with the record timestamps given (Unix ms).
    func send(timestamped records: [(key: String, value: String, timestamp: Int64)]) throws {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: self.bootstrapServers),
            logger: KafkaTestSupport.logger, onDeliveryReport: { _ in })
        for record in records {
            try producer.produce(
                topic: self.topics.notifications, key: Array(record.key.utf8), value: Array(record.value.utf8),
                timestamp: record.timestamp)
        }
        try producer.flush(timeout: .seconds(20))
    }

    // MARK: - Output

    /// Every record of `topic`, all partitions, from the beginning to the current high watermarks,
    /// as a `read_committed` reader sees them (`readUncommitted`: every record written, aborted
    /// ones included).
    ///
    /// Done when every partition's position reaches its high watermark: on a cluster that writes
    /// transaction markers (Tansu) the records are fewer than the offsets. The embedded broker
    /// writes none, and its records are counted.
    func readAll(_ topic: String, readUncommitted: Bool = false) throws -> [KafkaMessage] {
        var configuration = KafkaTestSupport.consumerConfiguration(self.cluster, group: nil)
        if readUncommitted { configuration.isolationLevel = .readUncommitted }
        let consumer = try KafkaConsumer(configuration: configuration, logger: KafkaTestSupport.logger)
        defer { consumer.close() }
        var expected = 0
        var start: [KafkaTopicPartition] = []
        var ends: [Int32: Int64] = [:]
        for partition in 0..<Int32(self.partitions) {
            let (low, high) = try consumer.watermarks(topic: topic, partition: partition, timeout: .seconds(10))
            expected += Int(high - low)
            start.append(KafkaTopicPartition(topic: topic, partition: partition, offset: low))
            if high > low { ends[partition] = high }
        }
        guard expected > 0 else { return [] }
        try consumer.assign(start)
        if self.isEmbedded {
            return KafkaTestSupport.consume(consumer, count: expected, timeout: .seconds(20))
        }
        let deadline = ContinuousClock.now + .seconds(20)
        var messages: [KafkaMessage] = []
        while !ends.isEmpty && ContinuousClock.now < deadline {
            consumer.consumeBatch(maxRecords: 500, timeout: .milliseconds(100)) { batch in
                messages.append(contentsOf: batch.map { $0.copy() })
            }
            let positions = try consumer.position(ends.keys.map { KafkaTopicPartition(topic: topic, partition: $0) })
            for position in positions where (position.offset ?? -1) >= ends[position.partition] ?? 0 {
                ends[position.partition] = nil
            }
        }
        return messages
    }

    /// The audit of all output topics.
    func audit() throws -> Audit {
        try Audit(
            delivered: self.readAll(self.topics.delivered), silenced: self.readAll(self.topics.silenced),
            deadLetters: self.readAll(self.topics.deadLetters), badges: self.readAll(self.topics.badges),
            summaries: self.readAll(self.topics.summaries)
        )
    }

    /// Waits until the outputs account for `count` notification ids (delivered + silenced + DLQ);
    /// throws ``WaitTimeout`` when they do not within `timeout`.
    @discardableResult
    func waitForOutputs(_ count: Int, timeout: Duration = .seconds(60)) async throws -> Audit {
        try await Wait.for("outputs for \(count) notification ids", timeout: timeout, { try self.audit() }) {
            $0.distinctIDs >= count
        }
    }

    /// Waits until the group has committed every one of `records` input records, then audits;
    /// throws ``WaitTimeout`` when it has not within `timeout`.
    ///
    /// A timeout records the group's offsets and what `explaining` says (the instances' logs)
    /// before it is rethrown.
    func settled(
        records: Int, timeout: Duration = .seconds(60), explaining: () -> String = { "" }
    ) async throws -> Audit {
        do {
            try await Wait.until("commits covering \(records) input records", timeout: timeout) {
                try self.committedOffsets().values.reduce(0, +) >= Int64(records)
            }
        } catch {
            let committed = (try? self.committedOffsets()) ?? [:]
            Issue.record(
                "\(error); the group's offsets \(committed.sorted { $0.key < $1.key }.map(\.value))\n\(explaining())")
            throw error
        }
        return try self.audit()
    }

    /// The group's committed offsets of the notifications topic.
    func committedOffsets(group: String = "focusgate") throws -> [Int32: Int64] {
        let consumer = try KafkaConsumer(
            configuration: KafkaTestSupport.consumerConfiguration(self.cluster, group: group),
            logger: KafkaTestSupport.logger)
        defer { consumer.close() }
        let partitions = (0..<Int32(self.partitions)).map {
            KafkaTopicPartition(topic: self.topics.notifications, partition: $0)
        }
        var result: [Int32: Int64] = [:]
        for partition in try consumer.committed(partitions, timeout: .seconds(10)) {
            result[partition.partition] = partition.offset ?? 0
        }
        return result
    }
}

/// What the gateway published, indexed for checks.
struct Audit {
    var delivered: [KafkaMessage]
    var silenced: [KafkaMessage]
    var deadLetters: [KafkaMessage]
    var badges: [KafkaMessage]
    var summaries: [KafkaMessage] = []

    /// Outputs per notification id (delivered and silenced by their `id`, DLQ records by their whole value).
    var outputsByID: [String: [KafkaMessage]] {
        var result: [String: [KafkaMessage]] = [:]
        for message in self.delivered + self.silenced {
            result[Self.id(of: message) ?? "?", default: []].append(message)
        }
        for message in self.deadLetters {
            result[message.valueString ?? "", default: []].append(message)
        }
        return result
    }

    var distinctIDs: Int { self.outputsByID.count }

    /// The last badge record per `userId/appId`.
    var finalBadges: [String: Badge] { self.badgeRecords.last }

    /// The badge record with the highest `sequence` per `userId/appId`: differs from the last one
    /// when a record was written after a newer one (a late writer, an aborted transaction the
    /// embedded broker shows). For failure messages.
    var highestBadges: [String: Badge] { self.badgeRecords.highest }

    private var badgeRecords: (last: [String: Badge], highest: [String: Badge]) {
        var result: [String: Badge] = [:]
        var highest: [String: Badge] = [:]
        for message in self.badges {
            guard let key = message.keyString, let value = message.value,
                let object = try? JSONSerialization.jsonObject(with: Data(value)) as? [String: Any],
                let appID = object["appId"] as? String, let badge = object["badge"] as? Int,
                let unread = object["unread"] as? Int, let sequence = object["sequence"] as? Int
            else {
                Issue.record("unreadable badge record")
                continue
            }
            let found = Badge(appID: appID, badge: badge, unread: unread, sequence: UInt64(sequence))
            result[key] = found
            if (highest[key]?.sequence ?? 0) < found.sequence { highest[key] = found }
        }
        return (result, highest)
    }

    /// The committed badges per `userId/appId` of the records' users, from the instances that
    /// own them.
    static func committedBadges(of instances: [InProcessGateway], records: [(key: String?, value: String)]) async
        -> [String: Badge]
    {
        var result: [String: Badge] = [:]
        for user in Set(records.compactMap(\.key)) {
            for instance in instances {
                for badge in await instance.gateway.directory.held(userID: user) {
                    result["\(user)/\(badge.appID)"] = badge
                }
            }
        }
        return result
    }

    static func id(of message: KafkaMessage) -> String? {
        guard let value = message.value,
            let object = try? JSONSerialization.jsonObject(with: Data(value)) as? [String: Any]
        else { return nil }
        return object["id"] as? String
    }
}

// MARK: - Events

enum Events {
    static func notification(
        _ id: String, user: String, app: String = "chat", criteria: String? = nil, level: String? = nil,
        sender: String? = nil, thread: String? = nil
    ) -> (key: String?, value: String) {
        var fields = [#""id":"\#(id)""#, #""userId":"\#(user)""#, #""appId":"\#(app)""#]
        if let thread { fields.append(#""threadId":"\#(thread)""#) }
        if let criteria { fields.append(#""filterCriteria":"\#(criteria)""#) }
        if let level { fields.append(#""interruptionLevel":"\#(level)""#) }
        if let sender { fields.append(#""senderId":"\#(sender)""#) }
        return (user, "{\(fields.joined(separator: ","))}")
    }

    static func apns(_ id: String, user: String, app: String = "chat", criteria: String, level: String = "active") -> (
        key: String?, value: String
    ) {
        (
            user,
            #"{"id":"\#(id)","userId":"\#(user)","appId":"\#(app)","aps":{"alert":{"title":"Hi","body":"There"},"filter-criteria":"\#(criteria)","interruption-level":"\#(level)","relevance-score":0.5},"payload":{"thread":"t-1"}}"#
        )
    }

    static func read(_ id: String, user: String, app: String = "chat", ids: [String]) -> (key: String?, value: String) {
        (
            user,
            #"{"type":"read","id":"\#(id)","userId":"\#(user)","appId":"\#(app)","notificationIds":[\#(ids.map { "\"\($0)\"" }.joined(separator: ","))]}"#
        )
    }

    static func clear(_ id: String, user: String, app: String = "chat") -> (key: String?, value: String) {
        (user, #"{"type":"clear","id":"\#(id)","userId":"\#(user)","appId":"\#(app)"}"#)
    }

    /// The last badge record per (user, app) a fresh ledger publishes from these inputs, under
    /// `context` for every user (`nil`: no Focus on, so badge = unread). A record is published
    /// when the badge changes, so its `unread` is as of that change.
    static func expectedBadges(
        _ records: [(key: String?, value: String)], maxUnreadPerApp: Int = 1000, context: CompiledFocusContext? = nil
    ) -> [String: Badge] {
        var state = PartitionState(maxUnreadPerApp: maxUnreadPerApp)
        let decoder = EventDecoder(maxEventBytes: 2048)
        var result: [String: Badge] = [:]
        for record in records {
            guard let event = try? decoder.decode(Array(record.value.utf8), key: record.key.map { Array($0.utf8) }),
                case .applied(let update?) = state.apply(event, lookup: .available(context), nowMilliseconds: 0)
                    .admission
            else { continue }
            result["\(update.userID)/\(update.appID)"] = Badge(
                appID: update.appID, badge: update.badge, unread: update.unread, sequence: update.sequence)
        }
        return result
    }
}

extension StateDirectory {
    /// The user's badges when a worker here holds the user, else none (a test's one instance
    /// holds every partition).
    func held(userID: String) async -> [Badge] {
        if case .held(let badges) = await self.badges(userID: userID) { return badges }
        return []
    }
}
