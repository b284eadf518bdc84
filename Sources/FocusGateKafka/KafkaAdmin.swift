internal import Crdkafka
public import Logging

/// Cluster administration through Kafka's Admin API: creating topics, reading their settings.
///
/// The embedded broker (librdkafka's mock cluster) does not implement CreateTopics; it creates
/// topics through its own API instead (`EmbeddedKafkaBroker.createTopic`, FocusGateEmbeddedBroker).
public final class KafkaAdmin {
    private let client: RDKafkaHandle

    /// Creates an admin client.
    ///
    /// - Parameter properties: librdkafka properties, at least `bootstrap.servers`; TLS/SASL settings pass through.
    public init(properties: [String: String], logger: Logger) throws(KafkaError) {
        // A producer handle: consumer-only properties are left out (no librdkafka warnings).
        self.client = try RDKafkaHandle(
            type: RD_KAFKA_PRODUCER,
            properties: mergedProperties(typed: [], passThrough: properties, for: .producer),
            callbacks: RDKafkaCallbacks(logger: logger)
        )
    }

    /// Creates the topics that do not exist yet; a topic that already exists is not an error.
    ///
    /// - Throws: ``KafkaError`` for the request, or the first topic the cluster refused.
    public func createTopics(_ topics: [KafkaTopicSpecification], timeout: Duration) throws(KafkaError) {
        guard !topics.isEmpty else { return }
        let rk = self.client.pointer
        var errorText = [CChar](repeating: 0, count: 512)
        var newTopics: [OpaquePointer?] = []
        defer { newTopics.forEach { rd_kafka_NewTopic_destroy($0) } }
        for topic in topics {
            guard
                let newTopic = rd_kafka_NewTopic_new(
                    topic.name, Int32(topic.partitions), Int32(topic.replicationFactor), &errorText, errorText.count)
            else {
                throw KafkaError(
                    code: .invalidArgument, message: "topic \(topic.name): \(String(cErrorBuffer: errorText))")
            }
            newTopics.append(newTopic)
            for (name, value) in topic.config.sorted(by: { $0.key < $1.key }) {
                try KafkaError.check(
                    rd_kafka_NewTopic_set_config(newTopic, name, value), "topic \(topic.name) config \(name)")
            }
        }
        let event = try self.request(RD_KAFKA_ADMIN_OP_CREATETOPICS, "create topics", timeout: timeout) {
            options, queue in
            newTopics.withUnsafeMutableBufferPointer { buffer in
                rd_kafka_CreateTopics(rk, buffer.baseAddress, buffer.count, options, queue)
            }
        }
        defer { rd_kafka_event_destroy(event) }
        guard let result = rd_kafka_event_CreateTopics_result(event) else { return }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(result, &count) else { return }
        for index in 0..<count {
            let topicResult = results[index]
            let err = rd_kafka_topic_result_error(topicResult)
            if err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS {
                let name = String(cString: rd_kafka_topic_result_name(topicResult))
                let detail = rd_kafka_topic_result_error_string(topicResult).map { String(cString: $0) } ?? ""
                throw KafkaError(err, context: "create topic \(name) \(detail)")
            }
        }
    }

    /// The values of the settings `names` (e.g. `cleanup.policy`) of each of `topics`, as the
    /// cluster reports them (DescribeConfigs), by topic and setting; a topic or setting the
    /// cluster does not report is left out.
    ///
    /// - Throws: ``KafkaError`` for the request (the embedded broker does not implement
    ///   DescribeConfigs: `_UNSUPPORTED_FEATURE` or a timeout), or the first topic refused.
    public func topicSettings(_ names: Set<String>, of topics: [String], timeout: Duration) throws(KafkaError)
        -> [String: [String: String]]
    {
        guard !topics.isEmpty else { return [:] }
        let rk = self.client.pointer
        var resources: [OpaquePointer?] = topics.map { rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, $0) }
        defer { resources.forEach { rd_kafka_ConfigResource_destroy($0) } }
        let event = try self.request(RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, "describe configs", timeout: timeout) {
            options, queue in
            resources.withUnsafeMutableBufferPointer { buffer in
                rd_kafka_DescribeConfigs(rk, buffer.baseAddress, buffer.count, options, queue)
            }
        }
        defer { rd_kafka_event_destroy(event) }
        guard let result = rd_kafka_event_DescribeConfigs_result(event) else { return [:] }
        var count = 0
        guard let described = rd_kafka_DescribeConfigs_result_resources(result, &count) else { return [:] }
        var values: [String: [String: String]] = [:]
        for index in 0..<count {
            let resource = described[index]
            let topic = String(cString: rd_kafka_ConfigResource_name(resource))
            try KafkaError.check(rd_kafka_ConfigResource_error(resource), "describe configs of \(topic)")
            var entryCount = 0
            guard let entries = rd_kafka_ConfigResource_configs(resource, &entryCount) else { continue }
            for entryIndex in 0..<entryCount {
                let entry = entries[entryIndex]
                let name = String(cString: rd_kafka_ConfigEntry_name(entry))
                guard names.contains(name) else { continue }
                values[topic, default: [:]][name] = rd_kafka_ConfigEntry_value(entry).map { String(cString: $0) } ?? ""
            }
        }
        return values
    }

    /// Runs one Admin API request: `send` issues it with its options (the request timeout set)
    /// onto a queue of its own. Returns the result event, which the caller destroys.
    ///
    /// - Throws: ``KafkaError`` when the options cannot be set, no answer comes within `timeout`
    ///   (and a second), or the request as a whole failed.
    private func request(
        _ operation: rd_kafka_admin_op_t, _ what: String, timeout: Duration,
        _ send: (_ options: OpaquePointer?, _ queue: OpaquePointer?) -> Void
    ) throws(KafkaError) -> OpaquePointer {
        let rk = self.client.pointer
        var errorText = [CChar](repeating: 0, count: 512)
        let options = rd_kafka_AdminOptions_new(rk, operation)
        defer { rd_kafka_AdminOptions_destroy(options) }
        try KafkaError.check(
            rd_kafka_AdminOptions_set_request_timeout(
                options, timeout.timeoutMilliseconds, &errorText, errorText.count),
            "admin request timeout"
        )
        let queue = rd_kafka_queue_new(rk)
        defer { rd_kafka_queue_destroy(queue) }
        send(options, queue)
        guard let event = rd_kafka_queue_poll(queue, timeout.timeoutMilliseconds + 1000) else {
            throw KafkaError(code: .timedOut, message: "\(what): no answer within \(timeout)", isRetriable: true)
        }
        let error = rd_kafka_event_error(event)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            rd_kafka_event_destroy(event)
            throw KafkaError(error, context: what)
        }
        return event
    }
}
