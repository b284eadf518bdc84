package import Crdkafka

/// An error reported by librdkafka or by the FocusGate Kafka layer.
///
/// The error keeps librdkafka's classification so that callers can react the way the library
/// intends: a *fatal* error means the client instance is unusable and must be closed; a
/// *retriable* error means the same call may be repeated; an error that *requires abort* means
/// the current transaction must be aborted and its work redone.
public struct KafkaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The librdkafka error code (`rd_kafka_resp_err_t`); its ``Code/name`` is stable and bounded.
    public var code: Code
    /// A human readable description. Never contains record keys or values.
    public var message: String
    /// The client instance can no longer be used (`rd_kafka_error_is_fatal`).
    public var isFatal: Bool
    /// The operation may be retried as is (`rd_kafka_error_is_retriable`).
    public var isRetriable: Bool
    /// The current transaction must be aborted (`rd_kafka_error_txn_requires_abort`).
    public var requiresTransactionAbort: Bool
    /// The configuration property this error is about, for configuration errors.
    public var property: String?

    /// Creates an error from its parts.
    public init(
        code: Code,
        message: String,
        isFatal: Bool = false,
        isRetriable: Bool = false,
        requiresTransactionAbort: Bool = false,
        property: String? = nil
    ) {
        self.code = code
        self.message = message
        self.isFatal = isFatal
        self.isRetriable = isRetriable
        self.requiresTransactionAbort = requiresTransactionAbort
        self.property = property
    }

    public var description: String {
        var flags: [String] = []
        if self.isFatal { flags.append("fatal") }
        if self.isRetriable { flags.append("retriable") }
        if self.requiresTransactionAbort { flags.append("abort-required") }
        let prefix = self.property.map { "property \($0): " } ?? ""
        let suffix = flags.isEmpty ? "" : " [\(flags.joined(separator: ","))]"
        return "KafkaError(\(self.code.name)): \(prefix)\(self.message)\(suffix)"
    }
}

// MARK: - Code

extension KafkaError {
    /// A librdkafka error code. Negative values are client-side errors, positive ones come from brokers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The raw `rd_kafka_resp_err_t` value.
        public let rawValue: Int32

        /// Wraps a raw `rd_kafka_resp_err_t` value.
        public init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        init(_ err: rd_kafka_resp_err_t) {
            self.rawValue = err.rawValue
        }

        package var rdkafka: rd_kafka_resp_err_t { rd_kafka_resp_err_t(rawValue: self.rawValue) }

        /// librdkafka's symbolic name, e.g. `_TIMED_OUT` or `NOT_LEADER_FOR_PARTITION`. Stable; safe as a metric label.
        public var name: String { String(cString: rd_kafka_err2name(self.rdkafka)) }

        public var description: String { self.name }

        public static let noError = Code(RD_KAFKA_RESP_ERR_NO_ERROR)
        public static let timedOut = Code(RD_KAFKA_RESP_ERR__TIMED_OUT)
        public static let transport = Code(RD_KAFKA_RESP_ERR__TRANSPORT)
        public static let allBrokersDown = Code(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        public static let invalidArgument = Code(RD_KAFKA_RESP_ERR__INVALID_ARG)
        public static let invalidType = Code(RD_KAFKA_RESP_ERR__INVALID_TYPE)
        public static let state = Code(RD_KAFKA_RESP_ERR__STATE)
        public static let fatal = Code(RD_KAFKA_RESP_ERR__FATAL)
        public static let fenced = Code(RD_KAFKA_RESP_ERR__FENCED)
        public static let unknownTopicOrPartition = Code(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
        public static let notLeaderForPartition = Code(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
        /// A record (or its batch) larger than the producer's `message.max.bytes` or the topic's
        /// `max.message.bytes`.
        public static let messageSizeTooLarge = Code(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
        public static let recordListTooLarge = Code(RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE)
        public static let requestTimedOut = Code(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
        public static let notCoordinator = Code(RD_KAFKA_RESP_ERR_NOT_COORDINATOR)
        public static let coordinatorNotAvailable = Code(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE)
        public static let coordinatorLoadInProgress = Code(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS)
        public static let notEnoughReplicas = Code(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS)
        public static let topicAlreadyExists = Code(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        public static let invalidProducerEpoch = Code(RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH)
        public static let producerFenced = Code(RD_KAFKA_RESP_ERR_PRODUCER_FENCED)
        public static let concurrentTransactions = Code(RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS)
        public static let invalidTransactionState = Code(RD_KAFKA_RESP_ERR_INVALID_TXN_STATE)
        public static let outOfOrderSequenceNumber = Code(RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER)
        public static let unsupportedFeature = Code(RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE)
        public static let queueFull = Code(RD_KAFKA_RESP_ERR__QUEUE_FULL)
        public static let messageTooLarge = Code(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
        /// The consumer group moved on (a rebalance): the member's generation or membership is
        /// no longer current.
        static let groupMembershipChanges: Set<Code> = [
            Code(RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION), Code(RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID),
            Code(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS), Code(RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID),
            Code(RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST),
        ]
    }
}

extension KafkaError {
    /// Whether the error says the consumer group is rebalancing or has moved on without this
    /// member (an old generation, an unknown member, lost partitions): what the member resolves by
    /// serving the rebalance, not by waiting.
    public var isGroupMembershipChange: Bool { Code.groupMembershipChanges.contains(self.code) }
}

// MARK: - Bridging from librdkafka

extension KafkaError {
    /// Takes ownership of an `rd_kafka_error_t`, destroys it, and returns its Swift form.
    static func consuming(_ error: OpaquePointer, context: String) -> KafkaError {
        defer { rd_kafka_error_destroy(error) }
        return KafkaError(
            code: Code(rd_kafka_error_code(error)),
            message: "\(context): \(String(cString: rd_kafka_error_string(error)))",
            isFatal: rd_kafka_error_is_fatal(error) != 0,
            isRetriable: rd_kafka_error_is_retriable(error) != 0,
            requiresTransactionAbort: rd_kafka_error_txn_requires_abort(error) != 0
        )
    }

    /// Wraps a bare response code, classifying it the way librdkafka does for codes without an error object.
    init(_ err: rd_kafka_resp_err_t, context: String) {
        let code = Code(err)
        self.init(
            code: code,
            message: "\(context): \(String(cString: rd_kafka_err2str(err)))",
            isFatal: code == .fatal || code == .fenced || code == .producerFenced,
            isRetriable: code == .timedOut || code == .transport || code == .allBrokersDown
                || code == .queueFull || code == .requestTimedOut || code == .notLeaderForPartition
                || code == .coordinatorNotAvailable || code == .notCoordinator
                || code == .coordinatorLoadInProgress || code == .notEnoughReplicas
        )
    }

    /// A configuration property was refused by librdkafka.
    static func configuration(property: String, message: String) -> KafkaError {
        KafkaError(code: .invalidArgument, message: message, property: property)
    }

    /// Throws when `err` is not `NO_ERROR`.
    package static func check(_ err: rd_kafka_resp_err_t, _ context: @autoclosure () -> String) throws(KafkaError) {
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw KafkaError(err, context: context())
        }
    }

    /// Throws when `error` is non-nil, taking ownership of it.
    package static func check(_ error: OpaquePointer?, _ context: @autoclosure () -> String) throws(KafkaError) {
        if let error {
            throw KafkaError.consuming(error, context: context())
        }
    }
}
