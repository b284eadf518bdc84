public import FocusGateCore
public import FocusGateKafka

/// Publishes context invalidations (docs/contract.md, Invalidations) so that every instance refreshes its cache.
public protocol InvalidationPublishing: Sendable {
    /// Publishes `value` with key `userID`; `nil` publishes a tombstone (drop from caches).
    func publish(userID: String, value: [UInt8]?) async throws
}

/// Publishes invalidations to Kafka through a ``KafkaAsyncProducer``.
public struct KafkaInvalidationPublisher: InvalidationPublishing {
    private let producer: KafkaAsyncProducer
    private let topic: String

    public init(producer: KafkaAsyncProducer, topic: String) {
        self.producer = producer
        self.topic = topic
    }

    public func publish(userID: String, value: [UInt8]?) async throws {
        _ = try await self.producer.send(topic: self.topic, key: Array(userID.utf8), value: value)
    }
}

/// Reads what this instance's workers hold of a user: badges and the user's recent decisions.
public protocol UserStateReading: Sendable {
    /// This instance's answer: the user's committed badges when one of its workers holds the
    /// user, else which input partitions its workers hold.
    func badges(userID: String) async -> LocalAnswer<[Badge]>
    /// A page of the user's remembered notifications, newest first (as committed).
    func history(userID: String, query: HistoryQuery) async -> LocalAnswer<HistoryPage>
    /// What the state remembers of one of the user's notifications (as committed).
    func notification(userID: String, id: String) async -> LocalAnswer<HistoryLookup>
}

/// What one instance knows of a user (docs/contract.md, "Any instance answers").
public enum LocalAnswer<Value: Sendable>: Sendable {
    /// A worker here holds the user's state: the answer, as committed.
    case held(Value)
    /// No worker here holds the user. `partitions` are the input partitions whose state the
    /// workers hold (restored), of `partitionCount` (`0`: not yet known).
    case notHeld(partitions: Set<Int32>, partitionCount: Int)
}

extension LocalAnswer: Equatable where Value: Equatable {}

/// What `/readyz` reports.
public struct Readiness: Sendable {
    /// Named checks and whether each passes: the instance is ready when all do.
    public var checks: [String: Bool]
    /// What only some answers need, reported beside the checks without deciding readiness:
    /// `store` (context reads and writes and cache misses need it; badges, history and explain
    /// with a context given answer from the state in memory, so a store outage must not take the
    /// instance out of its Services).
    public var dependencies: [String: Bool]

    public init(checks: [String: Bool], dependencies: [String: Bool] = [:]) {
        self.checks = checks
        self.dependencies = dependencies
    }

    /// Ready when every check passes.
    public var isReady: Bool { self.checks.values.allSatisfy { $0 } }
}
