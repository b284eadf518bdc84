import FocusGateKafka
import Logging

/// A worker's producer with a handle for each topic it writes: made together and, when an
/// at-least-once producer stops with a fatal error, replaced together (``GatewayWorker``).
struct GatewayOutputs {
    let producer: KafkaProducer
    let delivered: KafkaTopic
    let silenced: KafkaTopic
    let deadLetters: KafkaTopic
    let badges: KafkaTopic
    let status: KafkaTopic
    let summaries: KafkaTopic
    let state: KafkaTopic
    /// At-least-once, the delivery id of the commit interval being produced and its records so
    /// far: every record the worker produces is counted under it (exactly-once, nothing is).
    var ledger: IntervalLedger

    /// Creates worker `worker`'s producer (its transactional id made of `instanceTag`) and its
    /// topic handles; every delivery report goes to `deliveries`.
    ///
    /// - Throws: ``KafkaError`` when the producer or a topic handle cannot be made.
    init(
        configuration: GatewayConfiguration, worker: Int, instanceTag: String, deliveries: DeliveryLog,
        logger: Logger
    ) throws(KafkaError) {
        let producer = try KafkaProducer(
            configuration: configuration.producerConfiguration(worker: worker, instanceTag: instanceTag),
            logger: logger,
            onDeliveryReport: { report in deliveries.record(report) }
        )
        let topics = configuration.topics
        self.producer = producer
        self.delivered = try producer.topic(topics.delivered)
        self.silenced = try producer.topic(topics.silenced)
        self.deadLetters = try producer.topic(topics.deadLetters)
        self.badges = try producer.topic(topics.badges)
        self.status = try producer.topic(topics.status)
        self.summaries = try producer.topic(topics.summaries)
        self.state = try producer.topic(topics.state)
        self.ledger = IntervalLedger(
            counting: configuration.deliveryMode == .atLeastOnce, acknowledgements: producer.acknowledgements)
    }
}
