// Consume → produce through the embedded broker, once with FocusGate's Swift API and once with
// direct librdkafka calls from Swift, alternating in the same run. Prints both rates and their ratio.
//
//   swift run -c release KafkaPipeBenchmark [records] [rounds]
//   LD_PRELOAD=.build/release/libMallocCounter.so .build/release/KafkaPipeBenchmark allocations
//     (the producing thread's heap allocations and CPU per record produced, by headers per
//     record and delivery-report setting)
import Crdkafka
import FocusGateKafka
import FocusGateEmbeddedBroker
import Foundation
import Logging

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let recordCount = arguments.first ?? 500_000
let rounds = arguments.dropFirst().first ?? 5
let partitions: Int32 = 32
let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }

// MARK: - Setup

let broker = try EmbeddedKafkaBroker(logger: logger)
let input = "bench-in"
try broker.createTopic(.init(name: input, partitions: Int(partitions)))

/// ~260-byte APNs-shaped notification events for 10,000 users.
func event(_ index: Int) -> [UInt8] {
    let json =
        #"{"type":"notification","id":"n-\#(index)","userId":"u-\#(index % 10_000)","appId":"com.example.chat","filterCriteria":"work-account-identifier","aps":{"alert":{"title":"New message","body":"Lunch at noon? Bring the quarterly numbers please."},"interruption-level":"active","relevance-score":0.5}}"#
    return Array(json.utf8)
}

/// The calling thread's CPU time, in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

// MARK: - `allocations`: what producing one record costs the producing thread

// What librdkafka allocates on the thread that produces, per record, by the number of headers:
// the floor under a gateway worker's allocations (each output carries five or six headers). And
// that thread's CPU per record, delivery reports served on it for every record or (the gateway's
// setting) for failures only. Needs the allocation counter preloaded.
if CommandLine.arguments.dropFirst().first == "allocations" {
    typealias Reader = @convention(c) () -> UInt64
    guard let symbol = dlsym(nil, "focusgate_thread_allocations") else {
        print("run with LD_PRELOAD=.build/release/libMallocCounter.so (built by swift build -c release)")
        exit(2)
    }
    let allocations = unsafeBitCast(symbol, to: Reader.self)
    let output = "bench-allocations"
    try broker.createTopic(.init(name: output, partitions: 1))
    let records = 50_000
    let key = Array("u-1".utf8)
    let value = event(0)
    print(
        "| headers per record | delivery reports | allocations per record | thread CPU per record |\n|---|---|---|---|")
    for failuresOnly in [false, true] {
        for headerCount in [0, 1, 6] {
            var configuration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
            configuration.reportsFailuresOnly = failuresOnly
            var failed = 0
            let producer = try KafkaProducer(configuration: configuration, logger: logger) { report in
                if report.error != nil { failed += 1 }
            }
            let topic = try producer.topic(output)
            var headers = KafkaHeaderBuffer()
            for index in 0..<headerCount { headers.append(name: "focusgate-header-\(index)", value: "value") }
            // The first record makes the topic's and the connection's buffers; not counted.
            try producer.produce(topic: topic, key: key, value: value, headers: headers)
            try producer.flush(timeout: .seconds(30))
            let before = allocations()
            let cpuBefore = threadCPUSeconds()
            for _ in 0..<records {
                try producer.produce(topic: topic, key: key, value: value, headers: headers)
            }
            try producer.flush(timeout: .seconds(60))
            let perRecord = Double(allocations() - before) / Double(records)
            let cpu = (threadCPUSeconds() - cpuBefore) * 1e6 / Double(records)
            precondition(failed == 0, "\(failed) records failed")
            let reports = failuresOnly ? "failures only" : "every record"
            print(String(format: "| %d | %@ | %.2f | %.2f µs |", headerCount, reports, perRecord, cpu))
            print(
                #"{"benchmark":"produce-allocations","headers":\#(headerCount),"failures_only":\#(failuresOnly),"allocations":\#(String(format: "%.3f", perRecord)),"thread_cpu_us":\#(String(format: "%.3f", cpu))}"#
            )
        }
    }
    broker.shutdown()
    exit(0)
}

do {
    var loaded = 0
    let producer = try KafkaProducer(
        configuration: KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers), logger: logger,
        onDeliveryReport: { report in if report.error == nil { loaded += 1 } }
    )
    for index in 0..<recordCount {
        try producer.produce(topic: input, key: Array("u-\(index % 10_000)".utf8), value: event(index))
        if index % 10_000 == 0 { producer.poll() }
    }
    try producer.flush(timeout: .seconds(120))
    precondition(loaded == recordCount, "preload delivered \(loaded) of \(recordCount)")
}

let consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupID: nil)
let producerConfiguration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
let assignment = (0..<partitions).map {
    KafkaTopicPartition(topic: input, partition: $0, offset: KafkaOffset.beginning)
}

// MARK: - Swift API

func runSwift(output: String) throws -> Double {
    var delivered = 0
    var failed = 0
    let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger) { report in
        if report.error == nil { delivered += 1 } else { failed += 1 }
    }
    let topic = try producer.topic(output)
    let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
    let start = ContinuousClock.now
    try consumer.assign(assignment)
    var consumed = 0
    while consumed < recordCount {
        try consumer.consumeBatch(maxRecords: 10_000, timeout: .milliseconds(100)) { batch in
            for record in batch {
                try producer.produce(topic: topic, key: record.key, value: record.value)
            }
            consumed += batch.count
        }
        producer.poll()
    }
    try producer.flush(timeout: .seconds(120))
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    precondition(delivered == recordCount && failed == 0, "swift: delivered \(delivered), failed \(failed)")
    return Double(recordCount) / seconds
}

// MARK: - Direct C calls

nonisolated(unsafe) var cDelivered = 0
nonisolated(unsafe) var cFailed = 0

func makeClient(_ type: rd_kafka_type_t, _ properties: [(String, String)], deliveryReports: Bool) -> OpaquePointer {
    let conf = rd_kafka_conf_new()
    var text = [CChar](repeating: 0, count: 512)
    for (name, value) in properties {
        precondition(rd_kafka_conf_set(conf, name, value, &text, text.count) == RD_KAFKA_CONF_OK)
    }
    if deliveryReports {
        rd_kafka_conf_set_dr_msg_cb(conf) { _, message, _ in
            if message!.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR { cDelivered += 1 } else { cFailed += 1 }
        }
    }
    return rd_kafka_new(type, conf, &text, text.count)!
}

func runC(output: String) -> Double {
    cDelivered = 0
    cFailed = 0
    let producer = makeClient(RD_KAFKA_PRODUCER, producerConfiguration.rdkafkaProperties, deliveryReports: true)
    let rkt = rd_kafka_topic_new(producer, output, nil)!
    let consumer = makeClient(RD_KAFKA_CONSUMER, consumerConfiguration.rdkafkaProperties, deliveryReports: false)
    rd_kafka_poll_set_consumer(consumer)
    let queue = rd_kafka_queue_get_consumer(consumer)!
    let messages = UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>.allocate(capacity: 10_000)
    let start = ContinuousClock.now
    let list = rd_kafka_topic_partition_list_new(partitions)!
    for partition in 0..<partitions {
        rd_kafka_topic_partition_list_add(list, input, partition).pointee.offset = KafkaOffset.beginning
    }
    rd_kafka_assign(consumer, list)
    rd_kafka_topic_partition_list_destroy(list)
    var consumed = 0
    var vus = [rd_kafka_vu_t](repeating: rd_kafka_vu_t(), count: 4)
    while consumed < recordCount {
        let count = rd_kafka_consume_batch_queue(queue, 100, messages, 10_000)
        for index in 0..<max(count, 0) {
            let message = messages[index]!
            if message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                vus[0].vtype = RD_KAFKA_VTYPE_RKT
                vus[0].u.rkt = rkt
                vus[1].vtype = RD_KAFKA_VTYPE_MSGFLAGS
                vus[1].u.i = RD_KAFKA_MSG_F_COPY
                vus[2].vtype = RD_KAFKA_VTYPE_KEY
                vus[2].u.mem.ptr = message.pointee.key
                vus[2].u.mem.size = message.pointee.key_len
                vus[3].vtype = RD_KAFKA_VTYPE_VALUE
                vus[3].u.mem.ptr = message.pointee.payload
                vus[3].u.mem.size = message.pointee.len
                while let error = rd_kafka_produceva(producer, vus, 4) {
                    precondition(rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                    rd_kafka_error_destroy(error)
                    rd_kafka_poll(producer, 100)
                }
                consumed += 1
            }
            rd_kafka_message_destroy(message)
        }
        rd_kafka_poll(producer, 0)
    }
    precondition(rd_kafka_flush(producer, 120_000) == RD_KAFKA_RESP_ERR_NO_ERROR)
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    precondition(cDelivered == recordCount && cFailed == 0, "c: delivered \(cDelivered), failed \(cFailed)")
    messages.deallocate()
    rd_kafka_consumer_close(consumer)
    rd_kafka_queue_destroy(queue)
    rd_kafka_destroy(consumer)
    rd_kafka_topic_destroy(rkt)
    rd_kafka_destroy(producer)
    return Double(recordCount) / seconds
}

// MARK: - Run

var cRates: [Double] = []
var swiftRates: [Double] = []
for round in 0..<rounds {
    for variant in round % 2 == 0 ? ["c", "swift"] : ["swift", "c"] {
        let output = "bench-out-\(variant)-\(round)"
        try broker.createTopic(.init(name: output, partitions: Int(partitions)))
        if variant == "c" {
            cRates.append(runC(output: output))
        } else {
            swiftRates.append(try runSwift(output: output))
        }
    }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let cRate = median(cRates)
let swiftRate = median(swiftRates)
let ratio = swiftRate / cRate
func format(_ rate: Double) -> String { String(format: "%.0f", rate) }

print("")
print("| pipe (consume → produce, \(recordCount) records × \(rounds) rounds, median) | records/s |")
print("|---|---|")
print("| direct librdkafka calls | \(format(cRate)) |")
print("| FocusGateKafka API | \(format(swiftRate)) |")
print("| ratio API / direct | \(String(format: "%.3f", ratio)) |")
print(
    #"{"benchmark":"kafka-pipe","records":\#(recordCount),"rounds":\#(rounds),"direct_rps":\#(format(cRate)),"api_rps":\#(format(swiftRate)),"ratio":\#(String(format: "%.4f", ratio)),"direct_all":\#(cRates.map(format)),"api_all":\#(swiftRates.map(format))}"#
)
broker.shutdown()
