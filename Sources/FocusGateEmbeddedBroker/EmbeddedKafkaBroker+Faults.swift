internal import Crdkafka
public import FocusGateKafka

// MARK: - Fault injection

extension EmbeddedKafkaBroker {
    /// Takes a broker down (its connections drop, its listener stops) or brings it back up.
    public func setBroker(_ brokerID: Int32, up: Bool) throws(KafkaError) {
        let port = self.port(ofBroker: brokerID)
        // Down re-binds the broker's port at once and aborts the process if another socket took
        // it in between (HeldConnection): a connection it has accepted keeps the port held.
        let held = up ? nil : port.flatMap { HeldConnection(port: $0, timeout: .seconds(30)) }
        try withExtendedLifetime(held) { () throws(KafkaError) in
            try self.cluster.withPointer { cluster throws(KafkaError) in
                try KafkaError.check(
                    up
                        ? rd_kafka_mock_broker_set_up(cluster, brokerID)
                        : rd_kafka_mock_broker_set_down(cluster, brokerID),
                    "set broker \(brokerID) \(up ? "up" : "down")"
                )
            }
        }
        // The listener it listens on again was made when it went down, without TCP_NODELAY.
        if up, let port { ListeningSockets.disableNagle(ports: [port]) }
    }

    /// The port broker `brokerID` listens on (ids count from 1, in the order of ``brokerAddresses``).
    func port(ofBroker brokerID: Int32) -> UInt16? {
        let ports = self.cluster.ports
        return brokerID >= 1 && Int(brokerID) <= ports.count ? ports[Int(brokerID) - 1] : nil
    }

    /// Delays every response of a broker by `roundTripTime`: a slow broker.
    public func setRoundTripTime(_ roundTripTime: Duration, broker brokerID: Int32) throws(KafkaError) {
        try self.cluster.withPointer { cluster throws(KafkaError) in
            try KafkaError.check(
                rd_kafka_mock_broker_set_rtt(cluster, brokerID, Int32(roundTripTime.wholeMilliseconds)),
                "set broker \(brokerID) rtt"
            )
        }
    }

    /// Makes the next requests of type `api`, on any broker, fail with `errors`, one error per request.
    public func pushRequestErrors(_ api: KafkaAPIKey, _ errors: [KafkaError.Code]) throws(KafkaError) {
        try self.cluster.withPointer { cluster in
            let raw = errors.map(\.rdkafka)
            raw.withUnsafeBufferPointer { buffer in
                rd_kafka_mock_push_request_errors_array(cluster, api.rawValue, buffer.count, buffer.baseAddress)
            }
        }
    }

    /// Makes the next requests of type `api` to one broker fail with `error` after `delay`, in order.
    public func pushRequestErrors(
        broker brokerID: Int32,
        _ api: KafkaAPIKey,
        _ errors: [(error: KafkaError.Code, delay: Duration)]
    ) throws(KafkaError) {
        try self.cluster.withPointer { cluster throws(KafkaError) in
            for entry in errors {
                try KafkaError.check(
                    focusgate_mock_broker_push_request_error_rtt(
                        cluster, brokerID, api.rawValue, entry.error.rdkafka, Int32(entry.delay.wholeMilliseconds)
                    ),
                    "push error on broker \(brokerID)"
                )
            }
        }
    }

    /// Forgets errors pushed for `api` that have not fired yet.
    public func clearRequestErrors(_ api: KafkaAPIKey) throws(KafkaError) {
        try self.cluster.withPointer { cluster in
            rd_kafka_mock_clear_request_errors(cluster, api.rawValue)
        }
    }

    /// Makes every request about `topic` fail with `error` (`.noError` clears it).
    public func setTopicError(_ topic: String, _ error: KafkaError.Code) throws(KafkaError) {
        try self.cluster.withPointer { cluster in
            rd_kafka_mock_topic_set_error(cluster, topic, error.rdkafka)
        }
    }

    /// Moves a partition's leadership to `broker` (`-1`: no leader).
    public func setPartitionLeader(topic: String, partition: Int32, broker brokerID: Int32) throws(KafkaError) {
        try self.cluster.withPointer { cluster throws(KafkaError) in
            try KafkaError.check(
                rd_kafka_mock_partition_set_leader(cluster, topic, partition, brokerID),
                "set leader of \(topic)/\(partition)"
            )
        }
    }

    /// Moves the group or transaction coordinator for `key` (a group id or transactional id) to `broker`.
    public func setCoordinator(_ type: CoordinatorType, key: String, broker brokerID: Int32) throws(KafkaError) {
        try self.cluster.withPointer { cluster throws(KafkaError) in
            try KafkaError.check(
                rd_kafka_mock_coordinator_set(cluster, type.rawValue, key, brokerID),
                "set \(type.rawValue) coordinator for \(key)"
            )
        }
    }

    /// Which coordinator to move.
    public struct CoordinatorType: Sendable, Hashable {
        public let rawValue: String
        /// The consumer group coordinator.
        public static let group = CoordinatorType(rawValue: "group")
        /// The transaction coordinator.
        public static let transaction = CoordinatorType(rawValue: "transaction")
    }
}

/// Kafka protocol request types, numbered as in the protocol, for fault injection.
public struct KafkaAPIKey: Sendable, Hashable {
    /// The protocol's api key.
    public let rawValue: Int16

    /// Wraps a protocol api key.
    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    public static let produce = KafkaAPIKey(rawValue: 0)
    public static let fetch = KafkaAPIKey(rawValue: 1)
    public static let listOffsets = KafkaAPIKey(rawValue: 2)
    public static let metadata = KafkaAPIKey(rawValue: 3)
    public static let offsetCommit = KafkaAPIKey(rawValue: 8)
    public static let offsetFetch = KafkaAPIKey(rawValue: 9)
    public static let findCoordinator = KafkaAPIKey(rawValue: 10)
    public static let joinGroup = KafkaAPIKey(rawValue: 11)
    public static let heartbeat = KafkaAPIKey(rawValue: 12)
    public static let leaveGroup = KafkaAPIKey(rawValue: 13)
    public static let syncGroup = KafkaAPIKey(rawValue: 14)
    public static let initProducerID = KafkaAPIKey(rawValue: 22)
    public static let addPartitionsToTransaction = KafkaAPIKey(rawValue: 24)
    public static let addOffsetsToTransaction = KafkaAPIKey(rawValue: 25)
    public static let endTransaction = KafkaAPIKey(rawValue: 26)
    public static let transactionOffsetCommit = KafkaAPIKey(rawValue: 28)
}
