public import FocusGateCore
import FocusGateThreads
import Foundation
public import FocusGateKafka
public import Logging
public import ServiceLifecycle
import Synchronization

/// Reads `focus.invalidations` on every instance (no consumer group: every partition, from the
/// end; partitions added to the topic later, found within 30 s, from their beginning) and applies
/// each message to the cache; a changed context is handed to ``onChange`` so that
/// the worker owning the user recomputes their badges.
public final class InvalidationListener: Service, Sendable {
    private let configuration: KafkaConsumerConfiguration
    private let topic: String
    private let cache: ContextCache
    private let onChange: @Sendable (String, CompiledFocusContext?) -> Void
    private let logger: Logger
    private let consuming = Atomic(false)
    private let stopRequested = Atomic(false)
    private let positioned = Atomic(false)
    /// How often the listener looks for partitions added to the topic.
    private let partitionCheckInterval: Duration
    /// The topic's partition count as the cluster says it (replaced in tests).
    private let partitionCount: @Sendable (KafkaConsumer, String) throws -> Int

    /// Creates a listener.
    ///
    /// - Parameters:
    ///   - configuration: Brokers and pass-through properties; the group is ignored.
    ///   - topic: The invalidations topic.
    ///   - cache: The cache to apply messages to.
    ///   - onChange: Called on the listener's thread with the user and their new context (`nil`:
    ///     dropped or deleted) whenever a cached user's context changed.
    public convenience init(
        configuration: KafkaConsumerConfiguration,
        topic: String,
        cache: ContextCache,
        logger: Logger,
        onChange: @escaping @Sendable (String, CompiledFocusContext?) -> Void
    ) {
        self.init(
            configuration: configuration, topic: topic, cache: cache, logger: logger,
            partitionCheckInterval: .seconds(30),
            partitionCount: { consumer, topic in try consumer.partitionCount(topic: topic, timeout: .seconds(5)) },
            onChange: onChange)
    }

    /// A listener that looks for added partitions every `partitionCheckInterval`, asking
    /// `partitionCount` how many the topic has.
    init(
        configuration: KafkaConsumerConfiguration,
        topic: String,
        cache: ContextCache,
        logger: Logger,
        partitionCheckInterval: Duration,
        partitionCount: @escaping @Sendable (KafkaConsumer, String) throws -> Int,
        onChange: @escaping @Sendable (String, CompiledFocusContext?) -> Void
    ) {
        self.partitionCheckInterval = partitionCheckInterval
        self.partitionCount = partitionCount
        var configuration = configuration
        configuration.groupID = nil
        configuration.autoOffsetReset = .latest
        configuration.isolationLevel = .readUncommitted
        configuration.prefetch = .librdkafkaDefault
        // Invalidations are few and latency matters. A real broker answers a waiting fetch as soon
        // as data arrives; the embedded mock broker holds it for the full wait, so keep it short.
        if configuration.properties["fetch.wait.max.ms"] == nil {
            configuration.properties["fetch.wait.max.ms"] = "10"
        }
        self.configuration = configuration
        self.topic = topic
        self.cache = cache
        self.onChange = onChange
        self.logger = logger
    }

    /// Whether the listener has its partitions and is reading them (part of readiness).
    public var isConsuming: Bool { self.consuming.load(ordering: .relaxed) }

    /// Whether every partition has been positioned at its end: messages produced from now on are seen.
    public var isPositioned: Bool { self.positioned.load(ordering: .relaxed) }

    /// Reads until graceful shutdown or cancellation.
    public func run() async throws {
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await DedicatedThread.run(name: "fg-invalidation") { try self.loop() }
        } onCancelOrGracefulShutdown: {
            self.stopRequested.store(true, ordering: .relaxed)
        }
    }

    private func loop() throws {
        let consumer = try KafkaConsumer(configuration: self.configuration, logger: self.logger)
        defer {
            self.consuming.store(false, ordering: .relaxed)
            consumer.close()
        }
        var partitions = 0
        while partitions == 0 && !self.stopRequested.load(ordering: .relaxed) {
            do {
                partitions = try self.partitionCount(consumer, self.topic)
            } catch {
                self.logger.warning("invalidations topic not available yet", metadata: ["error": "\(error)"])
                Thread.sleep(forTimeInterval: 1)
            }
        }
        // Start at each partition's current end, looked up now: everything produced later is seen.
        var start: [KafkaTopicPartition] = []
        for partition in 0..<Int32(partitions) {
            let high =
                (try? consumer.watermarks(topic: self.topic, partition: partition, timeout: .seconds(5)).high)
                ?? KafkaOffset.end
            start.append(KafkaTopicPartition(topic: self.topic, partition: partition, offset: high))
        }
        try consumer.assign(start)
        self.positioned.store(true, ordering: .relaxed)
        self.consuming.store(true, ordering: .relaxed)
        self.logger.info(
            "reading invalidations", metadata: ["kafka.topic": "\(self.topic)", "kafka.partitions": "\(partitions)"])
        var nextPartitionCheck = ContinuousClock.now + self.partitionCheckInterval
        while !self.stopRequested.load(ordering: .relaxed) {
            let messages = consumer.consumeBatch(maxRecords: 500, timeout: .milliseconds(100)) { batch in
                batch.map { (key: $0.key.map { Array($0) }, value: $0.value.map { Array($0) }) }
            }
            for message in messages {
                self.handle(key: message.key, value: message.value)
            }
            if ContinuousClock.now >= nextPartitionCheck {
                nextPartitionCheck = ContinuousClock.now + self.partitionCheckInterval
                partitions = self.addNewPartitions(consumer, known: partitions)
            }
        }
    }

    /// Reads partitions added to the topic since it had `known`, each from its beginning: the
    /// invalidations sent to them before they were seen are applied too. Returns the count now
    /// read; the same when the cluster does not answer.
    private func addNewPartitions(_ consumer: KafkaConsumer, known: Int) -> Int {
        guard let count = try? self.partitionCount(consumer, self.topic), count > known else { return known }
        let added = (known..<count).map {
            KafkaTopicPartition(topic: self.topic, partition: Int32($0), offset: KafkaOffset.beginning)
        }
        do {
            try consumer.addAssigned(added)
        } catch {
            self.logger.warning(
                "cannot read the invalidation partitions added; trying again", metadata: ["kafka.error": "\(error)"])
            return known
        }
        self.logger.info(
            "reading added invalidation partitions",
            metadata: ["kafka.topic": "\(self.topic)", "kafka.partitions": "\(known)..<\(count)"])
        return count
    }

    private func handle(key: [UInt8]?, value: [UInt8]?) {
        let invalidation: ContextInvalidation
        do {
            invalidation = try ContextInvalidation.parse(key: key, value: value)
        } catch {
            self.logger.warning("invalidation ignored", metadata: ["reason": "\(error.reason)"])
            self.cache.recordInvalidInvalidation()
            return
        }
        let (outcome, context) = self.cache.apply(invalidation)
        switch (outcome, invalidation) {
        case (.applied, .inline(let document)):
            self.onChange(document.userID, context)
        case (.applied, .reload(let userID, _)):
            self.onChange(userID, context)
        case (.dropped, .drop(let userID)):
            self.onChange(userID, nil)
        default:
            break
        }
    }
}
