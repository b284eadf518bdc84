internal import Crdkafka

/// A producer's handle for one topic (`rd_kafka_topic_t`), so that producing skips the lookup by name.
public final class KafkaTopic {
    let pointer: OpaquePointer
    // Keeps the client alive: a topic handle must be destroyed before its client.
    private let client: RDKafkaHandle

    /// The topic name.
    public let name: String

    init(name: String, client: RDKafkaHandle) throws(KafkaError) {
        guard let pointer = rd_kafka_topic_new(client.pointer, name, nil) else {
            throw KafkaError(rd_kafka_last_error(), context: "topic handle for \(name)")
        }
        self.pointer = pointer
        self.client = client
        self.name = name
    }

    deinit {
        rd_kafka_topic_destroy(self.pointer)
    }
}
