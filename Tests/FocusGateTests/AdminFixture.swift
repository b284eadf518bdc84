import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateStore
import Foundation
import HTTPTypes
import Hummingbird
import Prometheus
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Badges and decisions held in a real partition state, as a worker would hold them.
actor LedgerUsers: UserStateReading {
    var state = PartitionState()
    /// The instance holds the one partition of one: a user it does not hold has no state.
    func badges(userID: String) -> LocalAnswer<[Badge]> {
        self.answer(userID) { $0.badges(userID: userID) }
    }
    func history(userID: String, query: HistoryQuery) -> LocalAnswer<HistoryPage> {
        self.answer(userID) { $0.history(userID: userID, query: query) }
    }
    func notification(userID: String, id: String) -> LocalAnswer<HistoryLookup> {
        self.answer(userID) { $0.historyItem(userID: userID, notificationID: id) }
    }
    private func answer<Value>(_ userID: String, _ read: (PartitionState) -> Value) -> LocalAnswer<Value> {
        self.state.contains(userID: userID) ? .held(read(self.state)) : .notHeld(partitions: [0], partitionCount: 1)
    }
    func add(userID: String, appID: String, id: String) {
        _ = self.state.apply(
            NotificationEvent(id: id, userID: userID, appID: appID), lookup: .available(nil), nowMilliseconds: 0
        )
    }
    /// Reads `id` and pushes it out of a one-notification window.
    func forget(userID: String, id: String) {
        var state = PartitionState(dedupeWindow: 1)
        swap(&state, &self.state)
        // The same notifications, remembered by a state with a window of one.
        for item in state.history(userID: userID, query: HistoryQuery(limit: 100)).items.reversed() {
            _ = self.state.apply(
                NotificationEvent(id: item.notificationID!, userID: userID, appID: item.appID!),
                lookup: .available(nil),
                nowMilliseconds: 0
            )
        }
        _ = self.state.apply(
            NotificationEvent(kind: .read, id: "r", userID: userID, appID: "chat", notificationIDs: [id]),
            lookup: .available(nil), nowMilliseconds: 0
        )
    }
    /// Decides `event` as a worker does, at input offset `offset`.
    func decide(_ event: NotificationEvent, context: CompiledFocusContext?, offset: Int64) -> Decision? {
        self.state.decide(
            event, lookup: .available(context), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
            nowMilliseconds: 1_000 + offset, sentAtMilliseconds: 1_000 + offset, sourceOffset: offset
        ).decision
    }
}

/// One instance's own answers, fixed: what it holds of a group's partitions and users.
struct InstanceAnswers: UserStateReading {
    var held: [String: [Badge]] = [:]
    var partitions: Set<Int32>
    var partitionCount = 2

    func badges(userID: String) async -> LocalAnswer<[Badge]> {
        self.held[userID].map { .held($0) } ?? self.notHeld()
    }
    func history(userID: String, query: HistoryQuery) async -> LocalAnswer<HistoryPage> {
        self.held[userID] == nil ? self.notHeld() : .held(HistoryPage(items: [], nextCursor: nil))
    }
    func notification(userID: String, id: String) async -> LocalAnswer<HistoryLookup> {
        self.held[userID] == nil ? self.notHeld() : .held(.notRemembered(forgotten: false))
    }
    private func notHeld<Value>() -> LocalAnswer<Value> {
        .notHeld(partitions: self.partitions, partitionCount: self.partitionCount)
    }
}

/// An admin API over a SQLite store, publishing invalidations to an embedded broker.
struct AdminFixture {
    let broker: EmbeddedKafkaBroker
    let store: SQLiteContextStore
    let producer: KafkaAsyncProducer
    let users = LedgerUsers()
    let registry = PrometheusCollectorRegistry()
    let topic = "focus.invalidations"

    init() async throws {
        self.broker = try EmbeddedKafkaBroker(
            topics: [.init(name: "focus.invalidations", partitions: 2)], logger: testLogger)
        self.store = try await temporarySQLiteStore()
        self.producer = try KafkaAsyncProducer(
            configuration: .init(bootstrapServers: self.broker.bootstrapServers), logger: testLogger)
    }

    func router(
        token: String? = nil, ready: Bool = true, storeReachable: Bool = true, maxBodyBytes: Int = 1 << 20,
        rateLimits: RateLimitPolicy = .none,
        users: (any UserStateReading)? = nil, peers: [String] = []
    ) -> Router<BasicRequestContext> {
        var configuration = AdminAPI.Configuration(token: token, rateLimits: rateLimits, peers: peers)
        configuration.maxBodyBytes = maxBodyBytes
        let api = AdminAPI(
            configuration: configuration, store: self.store,
            publisher: KafkaInvalidationPublisher(producer: self.producer, topic: self.topic),
            users: users ?? self.users, registry: self.registry, logger: testLogger,
            readiness: { Readiness(checks: ["consuming": ready], dependencies: ["store": storeReachable]) }
        )
        return api.router()
    }

    /// Every record on the invalidations topic, as (key, value) text: read until the partitions'
    /// high watermarks (a fixed two-second read came back short on a loaded machine).
    func invalidations() throws -> [(key: String?, value: String?)] {
        let consumer = try KafkaConsumer(
            configuration: .init(bootstrapServers: self.broker.bootstrapServers, groupID: nil), logger: testLogger)
        defer { consumer.close() }
        var expected = 0
        for partition in 0..<Int32(2) {
            let (low, high) = try consumer.watermarks(topic: self.topic, partition: partition, timeout: .seconds(10))
            expected += Int(high - low)
        }
        try consumer.assign(
            (0..<2).map { KafkaTopicPartition(topic: self.topic, partition: $0, offset: KafkaOffset.beginning) })
        var records: [KafkaMessage] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while records.count < expected {
            guard ContinuousClock.now < deadline else {
                throw KafkaError(
                    code: .timedOut, message: "read \(records.count) of the \(expected) invalidation records in 30 s")
            }
            consumer.consumeBatch(maxRecords: 100, timeout: .milliseconds(100)) { records += $0.map { $0.copy() } }
        }
        return records.sorted { $0.timestamp ?? 0 < $1.timestamp ?? 0 }.map {
            ($0.keyString, $0.value.map { String(decoding: $0, as: UTF8.self) })
        }
    }

    func shutdown() async {
        self.producer.shutdown()
        await self.store.close()
        self.broker.shutdown()
    }
}

func json(_ buffer: ByteBuffer) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
}

let contextBody =
    #"{"userId":"u-42","version":17,"focus":"Work","apps":{"com.example.chat":{"filterPredicate":"SELF IN {'work'}","parameters":{"status":"Working"}}}}"#
