/// Settings of a ``KafkaProducer``.
///
/// Typed settings cover what FocusGate relies on; ``properties`` passes any other librdkafka
/// property through unchanged and wins over a typed setting of the same name.
public struct KafkaProducerConfiguration: Sendable {
    /// Comma-separated `host:port` list (`bootstrap.servers`).
    public var bootstrapServers: String
    /// The client id reported to brokers (`client.id`). Default: `"focusgate"`.
    public var clientID: String = "focusgate"
    /// Idempotent delivery: no duplicates or reordering from retries (`enable.idempotence`). Default: `true`.
    public var isIdempotent: Bool = true
    /// Stops the producer at the first gap rather than skipping past it
    /// (`enable.gapless.guarantee`): when the broker refuses an idempotent producer's records for
    /// good, the records after them are failed too and the producer raises a fatal error
    /// (`_GAPLESS_GUARANTEE`), instead of renumbering them and writing them after the gap.
    /// Idempotent, non-transactional producers only. Default: `false`.
    public var isGapless: Bool = false
    /// Makes the producer transactional (`transactional.id`). Default: `nil`.
    public var transactionalID: String?
    /// How long the coordinator waits before aborting an open transaction of a dead producer
    /// (`transaction.timeout.ms`). Default: `30` seconds.
    public var transactionTimeout: Duration = .seconds(30)
    /// How long to wait to fill a batch (`linger.ms`). Default: `1` millisecond (librdkafka's is 5):
    /// a loaded producer fills its batches before then anyway, and at a light load each record
    /// would wait the whole linger, on each hop of a pipeline.
    public var linger: Duration = .milliseconds(1)
    /// Records the local queue holds before `produce` reports a full queue
    /// (`queue.buffering.max.messages`). Default: `1_000_000`.
    public var maxQueuedMessages: Int = 1_000_000
    /// Sends each request as soon as it is written, without waiting for the acknowledgement of
    /// the previous small one (`socket.nagle.disable`, i.e. `TCP_NODELAY`): with Nagle's algorithm,
    /// a request can wait up to 40 ms for a delayed ACK. Default: `true` (librdkafka's is `false`).
    public var disablesNagle: Bool = true
    /// Delivery reports only for records that failed (`delivery.report.only.error`): a delivered
    /// record is freed on librdkafka's broker thread instead of being handed to the polling
    /// thread, and the caller learns that everything enqueued was delivered from a ``KafkaProducer/flush(timeout:)``
    /// that returns with no failure reported, or from a transaction's commit. Default: `false`.
    public var reportsFailuresOnly: Bool = false
    /// Emit statistics at this interval (`statistics.interval.ms`); `nil` turns them off. Default: `nil`.
    public var statisticsInterval: Duration?
    /// Any librdkafka property, passed through (e.g. `security.protocol`, `sasl.mechanisms`); one that
    /// librdkafka defines for consumers only is left out. Default: empty.
    public var properties: [String: String] = [:]

    /// Creates a configuration for the given brokers.
    public init(bootstrapServers: String) {
        self.bootstrapServers = bootstrapServers
    }

    /// The librdkafka properties this configuration stands for.
    public var rdkafkaProperties: [(String, String)] {
        var typed: [(String, String)] = [
            ("bootstrap.servers", self.bootstrapServers),
            ("client.id", self.clientID),
            ("enable.idempotence", self.isIdempotent || self.transactionalID != nil ? "true" : "false"),
            ("linger.ms", String(self.linger.wholeMilliseconds)),
            ("queue.buffering.max.messages", String(self.maxQueuedMessages)),
            ("socket.nagle.disable", self.disablesNagle ? "true" : "false"),
        ]
        if self.reportsFailuresOnly {
            typed.append(("delivery.report.only.error", "true"))
        }
        if self.isGapless && self.isIdempotent && self.transactionalID == nil {
            typed.append(("enable.gapless.guarantee", "true"))
        }
        if let transactionalID = self.transactionalID {
            typed.append(("transactional.id", transactionalID))
            typed.append(("transaction.timeout.ms", String(self.transactionTimeout.wholeMilliseconds)))
        }
        if let interval = self.statisticsInterval {
            typed.append(("statistics.interval.ms", String(interval.wholeMilliseconds)))
        }
        return mergedProperties(typed: typed, passThrough: self.properties, for: .producer)
    }
}

extension Duration {
    /// The duration in whole milliseconds, as librdkafka's `*.ms` settings and timeouts take it.
    package var wholeMilliseconds: Int {
        let (seconds, attoseconds) = self.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// The duration as a librdkafka timeout argument, clamped to `Int32`.
    var timeoutMilliseconds: Int32 {
        Int32(clamping: self.wholeMilliseconds)
    }
}
