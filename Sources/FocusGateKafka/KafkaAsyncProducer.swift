import Foundation
public import Logging
import Synchronization

/// A `Sendable` producer for low-rate publishing from async code (the admin API's invalidations):
/// ``send(topic:key:value:)`` returns once the record is acknowledged.
///
/// A thread of its own owns the underlying ``KafkaProducer`` and serves its delivery reports; the
/// hot path does not use this type.
public final class KafkaAsyncProducer: Sendable {
    private struct Pending {
        var topic: String
        var key: [UInt8]?
        var value: [UInt8]?
        var continuation: CheckedContinuation<KafkaTopicPartition, any Error>
    }

    private struct State {
        var queue: [Pending] = []
        var waiting: [UInt64: CheckedContinuation<KafkaTopicPartition, any Error>] = [:]
        var nextID: UInt64 = 1
        var isStopped = false
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the producer thread.
    ///
    /// - Throws: ``KafkaError`` for a refused configuration.
    public init(configuration: KafkaProducerConfiguration, logger: Logger) throws(KafkaError) {
        // Create the producer here so that configuration errors surface to the caller. Records are
        // sent one at a time and awaited: do not linger to fill batches.
        var configuration = configuration
        if configuration.properties["linger.ms"] == nil {
            configuration.linger = .zero
        }
        let reports = DeliveryReports()
        let producer = try KafkaProducer(configuration: configuration, logger: logger, onDeliveryReport: reports.record)
        let handoff = ProducerHandoff(producer: producer)
        let thread = Thread { [self] in self.loop(handoff.take(), reports) }
        thread.name = "focusgate-async-producer"
        thread.start()
    }

    /// Produces one record and waits for its acknowledgement.
    ///
    /// - Returns: Where the record was written.
    /// - Throws: ``KafkaError`` from the delivery report, or when the producer is stopped.
    public func send(topic: String, key: [UInt8]?, value: [UInt8]?) async throws -> KafkaTopicPartition {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = self.state.withLock { state -> Bool in
                guard !state.isStopped else { return false }
                state.queue.append(Pending(topic: topic, key: key, value: value, continuation: continuation))
                return true
            }
            if accepted {
                self.wakeUp.signal()
            } else {
                continuation.resume(throwing: KafkaError(code: .state, message: "producer is stopped"))
            }
        }
    }

    /// Flushes outstanding records and stops the thread. Idempotent.
    public func shutdown() {
        let first = self.state.withLock { state in
            defer { state.isStopped = true }
            return !state.isStopped
        }
        guard first else { return }
        self.wakeUp.signal()
        self.finished.wait()
    }

    private func loop(_ producer: KafkaProducer, _ reports: DeliveryReports) {
        while true {
            let awaiting = self.state.withLock { !$0.waiting.isEmpty }
            if awaiting {
                // Acknowledgements are due: serve delivery reports promptly.
                producer.poll(timeout: .milliseconds(1))
                _ = self.wakeUp.wait(timeout: .now())
            } else {
                _ = self.wakeUp.wait(timeout: .now() + .milliseconds(50))
            }
            let (batch, stopping) = self.state.withLock { state in
                defer { state.queue.removeAll() }
                return (state.queue, state.isStopped)
            }
            for pending in batch {
                let id = self.state.withLock { state in
                    defer { state.nextID += 1 }
                    state.waiting[state.nextID] = pending.continuation
                    return state.nextID
                }
                do {
                    try producer.produce(topic: pending.topic, key: pending.key, value: pending.value, deliveryID: id)
                } catch {
                    self.state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(throwing: error)
                }
            }
            producer.poll()
            for (id, outcome) in reports.drain() {
                self.state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(with: outcome)
            }
            if stopping {
                try? producer.flush(timeout: .seconds(10))
                for (id, outcome) in reports.drain() {
                    self.state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(with: outcome)
                }
                let abandoned = self.state.withLock { state in
                    defer { state.waiting.removeAll() }
                    return Array(state.waiting.values)
                }
                abandoned.forEach {
                    $0.resume(throwing: KafkaError(code: .timedOut, message: "producer stopped before delivery"))
                }
                self.finished.signal()
                return
            }
        }
    }
}

/// Delivery outcomes collected on the producer thread.
private final class DeliveryReports: @unchecked Sendable {
    // Touched only by the producer thread (inside poll/flush and the loop).
    private var outcomes: [(UInt64, Result<KafkaTopicPartition, any Error>)] = []

    func record(_ report: KafkaDeliveryReport) {
        if let error = report.error {
            self.outcomes.append((report.deliveryID, .failure(error)))
        } else {
            self.outcomes.append(
                (
                    report.deliveryID,
                    .success(
                        KafkaTopicPartition(topic: report.topic, partition: report.partition, offset: report.offset))
                ))
        }
    }

    func drain() -> [(UInt64, Result<KafkaTopicPartition, any Error>)] {
        defer { self.outcomes.removeAll() }
        return self.outcomes
    }
}

/// Moves the producer, created on the caller's thread, to the producer thread exactly once.
private final class ProducerHandoff: @unchecked Sendable {
    // Written once in init, read once by the producer thread before any other use.
    private var producer: KafkaProducer?
    init(producer: KafkaProducer) { self.producer = producer }
    func take() -> KafkaProducer {
        defer { self.producer = nil }
        return self.producer!
    }
}
