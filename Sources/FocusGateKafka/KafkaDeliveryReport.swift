internal import Crdkafka

/// The outcome of one produced record, handed to the producer's delivery report handler.
///
/// A view on librdkafka's message: valid only during the handler call. Copy what you need.
public struct KafkaDeliveryReport {
    let message: UnsafePointer<rd_kafka_message_t>

    /// The topic the record was produced to.
    public var topic: String { String(cString: rd_kafka_topic_name(self.message.pointee.rkt)) }
    /// The partition the record was written to (or was meant for, on failure).
    public var partition: Int32 { self.message.pointee.partition }
    /// The record's offset, or `nil` when unknown (failure, or acks=0).
    public var offset: Int64? { self.message.pointee.offset >= 0 ? self.message.pointee.offset : nil }
    /// The error when the record was not delivered.
    public var error: KafkaError? {
        let err = self.message.pointee.err
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return KafkaError(err, context: "delivery to \(self.topic)/\(self.partition)")
    }
    /// The caller's identifier given when the record was produced.
    public var deliveryID: UInt64 { UInt64(UInt(bitPattern: self.message.pointee._private)) }
    /// The value of the record's last header named `name`, if it has one.
    public func header(_ name: String) -> [UInt8]? {
        var headers: OpaquePointer?
        guard rd_kafka_message_headers(self.message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR, let headers else {
            return nil
        }
        var value: UnsafeRawPointer?
        var size = 0
        guard rd_kafka_header_get_last(headers, name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        guard let value else { return [] }
        return Array(UnsafeRawBufferPointer(start: value, count: size))
    }

    /// The record's key bytes, valid during the handler call.
    public var key: UnsafeRawBufferPointer? {
        guard let key = self.message.pointee.key else { return nil }
        return UnsafeRawBufferPointer(start: key, count: self.message.pointee.key_len)
    }
}
