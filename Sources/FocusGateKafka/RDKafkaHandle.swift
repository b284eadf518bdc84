package import Crdkafka
package import Logging

/// Owns an `rd_kafka_t` client instance and the Swift callbacks it calls.
///
/// `@unchecked Sendable`: librdkafka's handle is thread-safe for every call made through this
/// type (poll, metadata, watermarks, fatal-error queries, destroy). Thread-bound calls (consume,
/// pause, resume, seek) and the callbacks, which run on the polling thread, belong to the
/// non-`Sendable` ``KafkaConsumer`` and ``KafkaProducer`` that own the handle; the mock cluster
/// and topic handles only keep it alive.
package final class RDKafkaHandle: @unchecked Sendable {
    package let pointer: OpaquePointer
    let callbacks: RDKafkaCallbacks

    /// Creates a client of `type` with `properties`, wiring every callback that `callbacks` provides.
    package init(type: rd_kafka_type_t, properties: [(String, String)], callbacks: RDKafkaCallbacks) throws(KafkaError)
    {
        let conf = try RDKafkaConfig.make(properties)
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(callbacks).toOpaque())
        rd_kafka_conf_set_log_cb(conf, rdkafkaLogCallback)
        rd_kafka_conf_set_error_cb(conf, rdkafkaErrorCallback)
        if callbacks.deliveryReport != nil {
            rd_kafka_conf_set_dr_msg_cb(conf, rdkafkaDeliveryReportCallback)
        }
        if callbacks.rebalance != nil {
            rd_kafka_conf_set_rebalance_cb(conf, rdkafkaRebalanceCallback)
        }
        if callbacks.statistics != nil {
            rd_kafka_conf_set_stats_cb(conf, rdkafkaStatisticsCallback)
        }
        do {
            try callbacks.acknowledgements?.install(on: conf)
        } catch {
            rd_kafka_conf_destroy(conf)
            throw error
        }
        var errorText = [CChar](repeating: 0, count: 512)
        guard let handle = rd_kafka_new(type, conf, &errorText, errorText.count) else {
            // A failed rd_kafka_new (2.0.2) frees the interceptors it shares with `conf`: destroying
            // `conf` then frees them again and crashes. That conf is left, once, on a failing start.
            if callbacks.acknowledgements == nil { rd_kafka_conf_destroy(conf) }
            let text = String(cErrorBuffer: errorText)
            throw KafkaError(code: .invalidArgument, message: "cannot create client: \(text)")
        }
        self.pointer = handle
        self.callbacks = callbacks
    }

    /// Set once the owner has called `rd_kafka_consumer_close`, whatever it returned: destroying
    /// then does not close again. (librdkafka 2.0.2's destroy closes a consumer with no time
    /// limit; after a close that timed out, it waits for an end the group never sends, and the
    /// process never exits.)
    var consumerClosed = false

    deinit {
        if self.consumerClosed {
            rd_kafka_destroy_flags(self.pointer, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE)
        } else {
            rd_kafka_destroy(self.pointer)
        }
    }

    /// The fatal error raised on this instance, if any. A fatal error makes the instance unusable.
    var fatalError: KafkaError? {
        var text = [CChar](repeating: 0, count: 512)
        let err = rd_kafka_fatal_error(self.pointer, &text, text.count)
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        var error = KafkaError(
            err,
            context: String(cErrorBuffer: text)
        )
        error.isFatal = true
        return error
    }

    /// Throws the fatal error raised on this instance, if any, without formatting anything when
    /// there is none.
    func throwIfFatal() throws(KafkaError) {
        guard rd_kafka_fatal_error(self.pointer, nil, 0) != RD_KAFKA_RESP_ERR_NO_ERROR,
            let error = self.fatalError
        else { return }
        throw error
    }

    /// Raises a fatal error on this instance as librdkafka would (`rd_kafka_test_fatal_error`),
    /// for tests of what follows one.
    func raiseFatalError(_ code: KafkaError.Code, reason: String) {
        _ = rd_kafka_test_fatal_error(self.pointer, code.rdkafka, reason)
    }

    /// Serves queued callbacks (delivery reports, errors, statistics) on the calling thread.
    @discardableResult
    func poll(timeoutMilliseconds: Int32) -> Int32 {
        rd_kafka_poll(self.pointer, timeoutMilliseconds)
    }

    /// Low and high watermarks of a partition, asked of the partition leader.
    func queryWatermarks(topic: String, partition: Int32, timeoutMilliseconds: Int32) throws(KafkaError) -> (
        low: Int64, high: Int64
    ) {
        var low: Int64 = 0
        var high: Int64 = 0
        try KafkaError.check(
            rd_kafka_query_watermark_offsets(self.pointer, topic, partition, &low, &high, timeoutMilliseconds),
            "query watermarks \(topic)/\(partition)"
        )
        return (low, high)
    }

    /// The cluster id from the cluster's metadata; `nil` when no broker answered within the timeout.
    func clusterID(timeoutMilliseconds: Int32) -> String? {
        guard let id = rd_kafka_clusterid(self.pointer, timeoutMilliseconds) else { return nil }
        defer { rd_kafka_mem_free(self.pointer, id) }
        return String(cString: id)
    }

    /// Every topic of the cluster with its partition count, from one metadata request for all
    /// topics (which, unlike a request naming a topic, never has a topic created).
    func topicPartitionCounts(timeoutMilliseconds: Int32) throws(KafkaError) -> [String: Int] {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        try KafkaError.check(rd_kafka_metadata(self.pointer, 1, nil, &metadata, timeoutMilliseconds), "metadata")
        defer { rd_kafka_metadata_destroy(metadata) }
        guard let metadata else { return [:] }
        var counts: [String: Int] = [:]
        for index in 0..<Int(metadata.pointee.topic_cnt) {
            let entry = metadata.pointee.topics[index]
            guard entry.err == RD_KAFKA_RESP_ERR_NO_ERROR, let name = entry.topic else { continue }
            counts[String(cString: name)] = Int(entry.partition_cnt)
        }
        return counts
    }

    /// Partition count of `topic` from the cluster's metadata.
    func partitionCount(topic: String, timeoutMilliseconds: Int32) throws(KafkaError) -> Int {
        let rkt = rd_kafka_topic_new(self.pointer, topic, nil)
        defer { rd_kafka_topic_destroy(rkt) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        try KafkaError.check(
            rd_kafka_metadata(self.pointer, 0, rkt, &metadata, timeoutMilliseconds),
            "metadata for \(topic)"
        )
        defer { rd_kafka_metadata_destroy(metadata) }
        guard let metadata, metadata.pointee.topic_cnt > 0 else { return 0 }
        let entry = metadata.pointee.topics[0]
        try KafkaError.check(entry.err, "metadata for \(topic)")
        return Int(entry.partition_cnt)
    }
}

// MARK: - Callbacks

/// The Swift side of librdkafka's callbacks. Immutable after creation; see ``RDKafkaHandle``.
package final class RDKafkaCallbacks: @unchecked Sendable {
    package typealias Rebalance = (
        OpaquePointer, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) ->
        Void

    let logger: Logger
    let deliveryReport: ((KafkaDeliveryReport) -> Void)?
    let rebalance: Rebalance?
    let statistics: ((KafkaStatistics) -> Void)?
    let error: ((KafkaError) -> Void)?
    /// A producer's acknowledgement counters, kept alive as long as the client.
    let acknowledgements: KafkaAcknowledgements?

    package init(
        logger: Logger,
        deliveryReport: ((KafkaDeliveryReport) -> Void)? = nil,
        rebalance: Rebalance? = nil,
        statistics: ((KafkaStatistics) -> Void)? = nil,
        error: ((KafkaError) -> Void)? = nil,
        acknowledgements: KafkaAcknowledgements? = nil
    ) {
        self.logger = logger
        self.acknowledgements = acknowledgements
        self.deliveryReport = deliveryReport
        self.rebalance = rebalance
        self.statistics = statistics
        self.error = error
    }

    static func of(_ rk: OpaquePointer?) -> RDKafkaCallbacks? {
        guard let rk, let opaque = rd_kafka_opaque(rk) else { return nil }
        return Unmanaged<RDKafkaCallbacks>.fromOpaque(opaque).takeUnretainedValue()
    }
}

private func rdkafkaLogCallback(
    _ rk: OpaquePointer?, _ level: Int32, _ facility: UnsafePointer<CChar>?, _ text: UnsafePointer<CChar>?
) {
    guard let callbacks = RDKafkaCallbacks.of(rk) else { return }
    // syslog levels: 0-3 error, 4 warning, 5-6 info/notice, 7 debug.
    let logLevel: Logger.Level = level <= 3 ? .error : level == 4 ? .warning : level <= 6 ? .info : .debug
    callbacks.logger.log(
        level: logLevel,
        "\(text.map { String(cString: $0) } ?? "")",
        metadata: ["kafka.facility": "\(facility.map { String(cString: $0) } ?? "")"]
    )
}

private func rdkafkaErrorCallback(
    _ rk: OpaquePointer?, _ err: Int32, _ reason: UnsafePointer<CChar>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let callbacks = RDKafkaCallbacks.of(rk) else { return }
    var error = KafkaError(
        rd_kafka_resp_err_t(rawValue: err), context: reason.map { String(cString: $0) } ?? "client error")
    if error.code == .fatal, let rk {
        var text = [CChar](repeating: 0, count: 512)
        let underlying = rd_kafka_fatal_error(rk, &text, text.count)
        error = KafkaError(underlying, context: String(cErrorBuffer: text))
        error.isFatal = true
    }
    // A connection that closed (`_TRANSPORT`: a broker closing an idle connection, a broker
    // restarting) is reconnected by librdkafka and is routine; brokers that stay unreachable are
    // reported as `_ALL_BROKERS_DOWN`, and the pipeline's readiness says so.
    let level: Logger.Level = error.code == .transport ? .info : .warning
    callbacks.logger.log(level: level, "librdkafka error", metadata: ["kafka.error": "\(error)"])
    callbacks.error?(error)
}

private func rdkafkaDeliveryReportCallback(
    _ rk: OpaquePointer?, _ message: UnsafePointer<rd_kafka_message_t>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let message, let callbacks = RDKafkaCallbacks.of(rk) else { return }
    callbacks.deliveryReport?(KafkaDeliveryReport(message: message))
}

private func rdkafkaRebalanceCallback(
    _ rk: OpaquePointer?,
    _ err: rd_kafka_resp_err_t,
    _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let rk, let partitions, let callbacks = RDKafkaCallbacks.of(rk) else { return }
    callbacks.rebalance?(rk, err, partitions)
}

private func rdkafkaStatisticsCallback(
    _ rk: OpaquePointer?, _ json: UnsafeMutablePointer<CChar>?, _ length: Int, _ opaque: UnsafeMutableRawPointer?
) -> Int32 {
    guard let json, let callbacks = RDKafkaCallbacks.of(rk) else { return 0 }
    let text = String(decoding: UnsafeRawBufferPointer(start: json, count: length), as: UTF8.self)
    callbacks.statistics?(KafkaStatistics(json: text))
    return 0  // librdkafka frees the JSON buffer.
}

extension String {
    /// Decodes a NUL-terminated C buffer that librdkafka filled with an error text.
    init(cErrorBuffer buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
