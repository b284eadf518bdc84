internal import Crdkafka

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif

/// A consumed record: a view on librdkafka's message, valid only inside the
/// ``KafkaConsumer/consumeBatch(maxRecords:timeout:_:)`` call that produced it.
///
/// Key, value and header bytes are borrowed, not copied; use ``copy()`` to keep a record.
public struct KafkaRecord {
    let pointer: UnsafeMutablePointer<rd_kafka_message_t>

    /// The topic name.
    public var topic: String { String(cString: rd_kafka_topic_name(self.pointer.pointee.rkt)) }
    /// The partition.
    public var partition: Int32 { self.pointer.pointee.partition }
    /// The record's offset in its partition.
    public var offset: Int64 { self.pointer.pointee.offset }

    /// The key bytes, or `nil` when the record has no key.
    public var key: UnsafeRawBufferPointer? {
        guard let key = self.pointer.pointee.key else { return nil }
        return UnsafeRawBufferPointer(start: key, count: self.pointer.pointee.key_len)
    }

    /// The value bytes, or `nil` for a tombstone.
    public var value: UnsafeRawBufferPointer? {
        guard let value = self.pointer.pointee.payload else { return nil }
        return UnsafeRawBufferPointer(start: value, count: self.pointer.pointee.len)
    }

    /// The record timestamp in milliseconds since the epoch, if the record has one.
    public var timestamp: Int64? {
        var type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let value = rd_kafka_message_timestamp(self.pointer, &type)
        return type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : value
    }

    /// The bytes of the last header called `name`; `.some(nil)` for a header without value, `nil` when absent.
    public func header(_ name: String) -> UnsafeRawBufferPointer?? {
        guard let headers = self.headerList else { return nil }
        var value: UnsafeRawPointer?
        var size = 0
        guard rd_kafka_header_get_last(headers, name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR else {
            return nil
        }
        guard let value else { return .some(nil) }
        return .some(UnsafeRawBufferPointer(start: value, count: size))
    }

    /// Appends every header of the record, in record order and unchanged (values absent stay
    /// absent), to `buffer`: no Swift allocation once the buffer has grown.
    public func appendHeaders(to buffer: inout KafkaHeaderBuffer) {
        guard let list = self.headerList else { return }
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            let nameBytes = name.map { UnsafeRawBufferPointer(start: $0, count: strlen($0)) }
            buffer.append(
                nameBytes: nameBytes ?? UnsafeRawBufferPointer(start: nil, count: 0),
                value: value.map { UnsafeRawBufferPointer(start: $0, count: size) })
            index += 1
        }
    }

    /// The bytes the record's headers take, names and values: 0, without asking librdkafka, for a
    /// record whose bytes show it has none (``isKnownHeaderless``).
    public var headerBytes: Int {
        guard let list = self.headerList else { return 0 }
        var total = 0
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            total += (name.map { strlen($0) } ?? 0) + (value == nil ? 0 : size)
            index += 1
        }
        return total
    }

    /// All headers, copied, in record order.
    public var headers: [KafkaHeader] {
        guard let list = self.headerList else { return [] }
        var result: [KafkaHeader] = []
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
            result.append(KafkaHeader(name: name.map { String(cString: $0) } ?? "", value: bytes))
            index += 1
        }
        return result
    }

    /// librdkafka's list of the record's headers, `nil` when it has none.
    private var headerList: OpaquePointer? {
        guard !self.isKnownHeaderless else { return nil }
        var list: OpaquePointer?
        guard rd_kafka_message_headers(self.pointer, &list) == RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return list
    }

    /// Whether the record's own bytes show it has no headers, so that librdkafka need not be asked:
    /// librdkafka 2.0.2 allocates a parse buffer (and frees it) to read even a header count of zero,
    /// two allocations for every record without headers.
    ///
    /// A record of the current format (v2) is `… key length, key, value length, value, header
    /// count, headers`, lengths as zigzag varints, and librdkafka's key and value point into it.
    /// So when the bytes between the key's end and the value's start are exactly the varint of the
    /// value's length, the byte after the value is the header count; zero means none. The older
    /// formats (v0, v1) have a 4-byte length there and no header count after the value, and a
    /// value under 1 MiB has a varint of at most 3 bytes, so they never pass the check; nor does a
    /// record with an absent or empty key or value (librdkafka gives those no pointer), a value of
    /// 1 MiB or more, or bytes librdkafka copied apart. Those are asked of librdkafka.
    var isKnownHeaderless: Bool {
        let message = self.pointer.pointee
        guard let key = message.key, let value = message.payload, message.len < 1 << 20 else { return false }
        let keyEnd = UnsafeRawPointer(key) + message.key_len
        let valueStart = UnsafeRawPointer(value)
        // The varint of the value's length, byte by byte, must be all that lies between them; no
        // byte is read unless it is one of the 1 to 3 just before the value.
        var length = UInt64(message.len) << 1  // zigzag of a non-negative length
        var cursor = keyEnd
        repeat {
            guard (1...3).contains(valueStart - cursor) else { return false }
            let byte = UInt8(truncatingIfNeeded: length & 0x7F) | (length > 0x7F ? 0x80 : 0)
            guard cursor.load(as: UInt8.self) == byte else { return false }
            length >>= 7
            cursor += 1
        } while length > 0
        guard cursor == valueStart else { return false }
        return valueStart.load(fromByteOffset: message.len, as: UInt8.self) == 0
    }

    /// An owned copy of the record.
    public func copy() -> KafkaMessage {
        KafkaMessage(
            topic: self.topic,
            partition: self.partition,
            offset: self.offset,
            key: self.key.map { Array($0) },
            value: self.value.map { Array($0) },
            headers: self.headers,
            timestamp: self.timestamp
        )
    }
}

/// An owned, `Sendable` copy of a consumed record.
public struct KafkaMessage: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]?
    public var value: [UInt8]?
    public var headers: [KafkaHeader]
    public var timestamp: Int64?

    /// Creates a message.
    public init(
        topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8]?,
        headers: [KafkaHeader], timestamp: Int64?
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    /// The key as UTF-8 text.
    public var keyString: String? { self.key.map { String(decoding: $0, as: UTF8.self) } }
    /// The value as UTF-8 text.
    public var valueString: String? { self.value.map { String(decoding: $0, as: UTF8.self) } }
    /// The value of the last header called `name`, as UTF-8 text.
    public func header(_ name: String) -> String? {
        self.headers.last { $0.name == name }?.stringValue
    }
}

/// The records of one ``KafkaConsumer/consumeBatch(maxRecords:timeout:_:)`` call, in consumption order.
///
/// Per-partition order is Kafka's order. Consumer errors delivered with the batch (for example a
/// topic that does not exist) are in ``errors``, not among the records.
public struct KafkaRecordBatch: RandomAccessCollection {
    let messages: UnsafeBufferPointer<UnsafeMutablePointer<rd_kafka_message_t>?>

    /// Errors reported by the consumer in place of records.
    public let errors: [KafkaError]

    public var startIndex: Int { 0 }
    public var endIndex: Int { self.messages.count }
    public subscript(position: Int) -> KafkaRecord { KafkaRecord(pointer: self.messages[position]!) }
}

/// A consumer's group membership, sent with a transaction's offsets so that a zombie is fenced.
public final class KafkaConsumerGroupMetadata {
    let pointer: OpaquePointer

    init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        rd_kafka_consumer_group_metadata_destroy(self.pointer)
    }
}

/// A change of a group consumer's assignment, handed to the rebalance hook before it takes effect.
public enum KafkaRebalance: Sendable, Hashable {
    /// These partitions are about to be consumed: restore their state now.
    case assigned([KafkaTopicPartition])
    /// These partitions are about to be taken away: finish and commit their work now. When `lost`,
    /// another member may already own them, so commits for them will fail and must not be attempted.
    case revoked([KafkaTopicPartition], lost: Bool)
}
