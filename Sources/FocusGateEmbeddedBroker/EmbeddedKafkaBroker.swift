internal import Crdkafka
public import FocusGateKafka
public import Logging
import Synchronization

/// An in-process Kafka cluster: librdkafka's mock cluster, speaking the real Kafka protocol over
/// TCP on 127.0.0.1, with consumer groups, idempotence, the transactional API and fault injection
/// (see `EmbeddedKafkaBroker+Faults.swift`).
///
/// Limits of librdkafka 2.0.2's mock cluster: each partition keeps only its newest 100,000 batches
/// or 5 MiB; no compaction; offsets sent with a transaction are not stored; commit and abort write
/// no control records, so `read_committed` consumers also see aborted records; no Admin API.
public final class EmbeddedKafkaBroker: Sendable {
    let cluster: RDKafkaMockCluster
    private let forwarder: TCPForwarder?

    /// The address clients bootstrap from: `127.0.0.1:port` when a port was asked for, else the
    /// cluster's own listener addresses.
    public let bootstrapServers: String
    /// The brokers' own listener addresses, as advertised in the cluster's metadata.
    public let brokerAddresses: String
    /// Number of brokers (ids `1...brokerCount`).
    public let brokerCount: Int
    /// The bytes of record batches a partition keeps (librdkafka 2.0.2's mock cluster, fixed):
    /// past it the oldest batches are dropped, read or not.
    public static let partitionByteLimit = 5 * 1024 * 1024

    /// Starts a cluster.
    ///
    /// - Parameters:
    ///   - brokerCount: Brokers in the cluster; fault tests use several to move leaders. Default: `1`.
    ///   - port: A fixed bootstrap port on 127.0.0.1 (forwarded to the first broker), or `nil` for
    ///     ports the kernel picks.
    ///   - topics: Topics to create at start.
    ///   - logger: Receives the cluster's log lines.
    /// - Throws: ``KafkaError`` when the cluster or the bootstrap port cannot be set up.
    public init(
        brokerCount: Int = 1,
        port: UInt16? = nil,
        topics: [KafkaTopicSpecification] = [],
        logger: Logger
    ) throws(KafkaError) {
        precondition(brokerCount >= 1, "a cluster needs at least one broker")
        self.cluster = try RDKafkaMockCluster(brokerCount: brokerCount, logger: logger)
        self.brokerCount = brokerCount
        self.brokerAddresses = self.cluster.bootstraps
        if let port {
            let forwarder = try TCPForwarder(port: port, targetPort: self.cluster.ports[0])
            self.forwarder = forwarder
            self.bootstrapServers = "127.0.0.1:\(forwarder.port)"
        } else {
            self.forwarder = nil
            self.bootstrapServers = self.brokerAddresses
        }
        for topic in topics {
            try self.createTopic(topic)
        }
    }

    deinit {
        self.shutdown()
    }

    /// Creates a topic. The mock cluster keeps every record: `cleanup.policy=compact` is accepted
    /// but not applied.
    public func createTopic(_ topic: KafkaTopicSpecification) throws(KafkaError) {
        let replication = topic.replicationFactor > 0 ? min(topic.replicationFactor, self.brokerCount) : 1
        try self.cluster.withPointer { cluster throws(KafkaError) in
            try KafkaError.check(
                rd_kafka_mock_topic_create(cluster, topic.name, Int32(topic.partitions), Int32(replication)),
                "create topic \(topic.name)"
            )
        }
    }

    /// Stops the cluster and the bootstrap forwarder; clients see their connections drop. Idempotent.
    public func shutdown() {
        self.forwarder?.stop()
        self.cluster.destroy()
    }
}

// MARK: - The mock cluster handle

/// Owns a mock cluster and the client instance it lives in.
///
/// `@unchecked Sendable`: librdkafka's mock API posts every command to the cluster's own thread,
/// so calls from several threads are safe; destruction is made exactly-once by the mutex, and
/// no call reaches the pointer after it.
final class RDKafkaMockCluster: @unchecked Sendable {
    private let client: RDKafkaHandle
    private let state: Mutex<OpaquePointer?>
    let bootstraps: String
    /// Each broker's listener port, in the order of `bootstraps` (broker ids count from 1).
    let ports: [UInt16]

    init(brokerCount: Int, logger: Logger) throws(KafkaError) {
        // The cluster lives inside a client instance; no bootstrap servers, so it connects nowhere.
        self.client = try RDKafkaHandle(
            type: RD_KAFKA_PRODUCER,
            properties: [("client.id", "focusgate-embedded-broker"), ("log_level", "4")],
            callbacks: RDKafkaCallbacks(logger: logger)
        )
        guard let cluster = rd_kafka_mock_cluster_new(self.client.pointer, Int32(brokerCount)) else {
            throw KafkaError(code: .transport, message: "cannot start the embedded broker (see log)")
        }
        self.bootstraps = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        self.ports = self.bootstraps.split(separator: ",").compactMap { UInt16($0.split(separator: ":").last ?? "") }
        self.state = Mutex(cluster)
        // Its connections inherit TCP_NODELAY from the listeners; without it a response can wait
        // 40 ms for the client's delayed ACK (ListeningSockets).
        let ports = Set(self.ports)
        let set = ListeningSockets.disableNagle(ports: ports)
        if set != ports {
            logger.warning("embedded broker: TCP_NODELAY not set on every listener; responses may wait up to 40 ms")
        }
    }

    deinit {
        self.destroy()
    }

    func withPointer<R>(_ body: (OpaquePointer) throws(KafkaError) -> R) throws(KafkaError) -> R {
        let pointer = self.state.withLock { $0 }
        guard let pointer else {
            throw KafkaError(code: .state, message: "embedded broker is shut down")
        }
        return try body(pointer)
    }

    func destroy() {
        let pointer = self.state.withLock { state in
            defer { state = nil }
            return state
        }
        if let pointer {
            rd_kafka_mock_cluster_destroy(pointer)
        }
    }
}
