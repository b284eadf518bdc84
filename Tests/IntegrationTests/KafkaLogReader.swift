import FocusGateHarness
import Foundation

/// Reads a partition's record batches straight from a broker over the Kafka protocol (Fetch v4,
/// `read_uncommitted`) and sorts its records by the transaction markers in the log, as a
/// `read_committed` reader would see them.
///
/// A `read_committed` client relies on the broker's list of aborted transactions in each fetch
/// answer to leave their records out. Tansu 0.6 writes the commit and abort markers but sends that
/// list empty, so librdkafka there shows aborted records too; this reader goes by the markers
/// themselves: a transactional batch's records are committed or aborted by the next marker of
/// the same producer id, and open while none follows.
struct KafkaLogReader {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// One record of a batch, as written.
    struct Record {
        var offset: Int64
        var key: [UInt8]?
        var value: [UInt8]?
        var headers: [(name: String, value: [UInt8]?)]

        func header(_ name: String) -> String? {
            self.headers.last { $0.name == name }?.value.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// A partition's records by what the markers made of them.
    struct Partition {
        /// Records outside transactions, and those of committed transactions, in log order.
        var committed: [Record] = []
        /// Records of transactions an abort marker closed.
        var aborted: [Record] = []
        /// Records of transactions no marker has closed yet.
        var open: [Record] = []
    }

    let port: UInt16

    /// A reader of the broker at `bootstrapServers`, on this machine (`127.0.0.1:port`).
    init(bootstrapServers: String) throws {
        let parts = bootstrapServers.split(separator: ",")[0].split(separator: ":")
        guard parts.count == 2, parts[0] == "127.0.0.1" || parts[0] == "localhost", let port = UInt16(parts[1]) else {
            throw Failure(description: "not 127.0.0.1:port: \(bootstrapServers)")
        }
        self.port = port
    }

    /// Every batch of `topic`/`partition` from offset 0 up to the high watermark, sorted.
    func read(topic: String, partition: Int32) throws -> Partition {
        let connection = try Connection(port: self.port)
        defer { connection.close() }
        var result = Partition()
        var pending: [Int64: [Record]] = [:]
        var offset: Int64 = 0
        var correlation: Int32 = 0
        while true {
            correlation += 1
            let answer = try connection.roundTrip(Self.fetchRequest(topic, partition, offset, correlation))
            let (highWatermark, records) = try Self.parseFetchAnswer(answer, correlation: correlation)
            guard offset < highWatermark else { break }
            var reader = ByteReader(records)
            var progressed = false
            while let batch = try reader.batch() {
                progressed = true
                offset = batch.lastOffset + 1
                if batch.isControl {
                    var key = ByteReader(batch.records.first?.key ?? [])
                    let kind = key.controlType()
                    let closed = pending.removeValue(forKey: batch.producerID) ?? []
                    if kind == 1 { result.committed += closed } else { result.aborted += closed }
                } else if batch.isTransactional {
                    pending[batch.producerID, default: []] += batch.records
                } else {
                    result.committed += batch.records
                }
            }
            guard progressed else {
                throw Failure(description: "no whole batch at \(topic)/\(partition)@\(offset) below \(highWatermark)")
            }
        }
        result.open = pending.values.flatMap { $0 }.sorted { $0.offset < $1.offset }
        result.committed.sort { $0.offset < $1.offset }
        return result
    }

    // MARK: - Fetch v4

    static func fetchRequest(_ topic: String, _ partition: Int32, _ offset: Int64, _ correlation: Int32) -> [UInt8] {
        var body = ByteWriter()
        body.int16(1)  // Fetch
        body.int16(4)
        body.int32(correlation)
        body.string("focusgate-audit")
        body.int32(-1)  // replica id: a consumer
        body.int32(100)  // max wait, ms
        body.int32(1)  // min bytes
        body.int32(8 << 20)  // max bytes
        body.int8(0)  // read_uncommitted: every batch, markers included
        body.int32(1)
        body.string(topic)
        body.int32(1)
        body.int32(partition)
        body.int64(offset)
        body.int32(8 << 20)
        var framed = ByteWriter()
        framed.int32(Int32(body.bytes.count))
        return framed.bytes + body.bytes
    }

    static func parseFetchAnswer(_ answer: [UInt8], correlation: Int32) throws -> (Int64, ArraySlice<UInt8>) {
        var reader = ByteReader(answer[...])
        guard try reader.int32() == correlation else { throw Failure(description: "an answer to another request") }
        _ = try reader.int32()  // throttle time
        guard try reader.int32() == 1 else { throw Failure(description: "not one topic in the answer") }
        _ = try reader.string()
        guard try reader.int32() == 1 else { throw Failure(description: "not one partition in the answer") }
        _ = try reader.int32()
        let error = try reader.int16()
        guard error == 0 else { throw Failure(description: "fetch error \(error)") }
        let highWatermark = try reader.int64()
        _ = try reader.int64()  // last stable offset
        let aborted = try reader.int32()
        for _ in 0..<max(0, aborted) { _ = try (reader.int64(), reader.int64()) }
        let length = try reader.int32()
        return (highWatermark, length <= 0 ? [] : try reader.bytes(Int(length)))
    }
}

// MARK: - Bytes

/// Big-endian Kafka protocol fields, and record batches (v2) with their varint records.
struct ByteReader {
    struct Batch {
        var lastOffset: Int64
        var isTransactional: Bool
        var isControl: Bool
        var producerID: Int64
        var records: [KafkaLogReader.Record]
    }

    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, self.bytes.count >= count else {
            throw KafkaLogReader.Failure(description: "short read")
        }
        defer { self.bytes = self.bytes.dropFirst(count) }
        return self.bytes.prefix(count)
    }

    mutating func integer(_ size: Int) throws -> Int64 {
        try self.bytes(size).reduce(0) { $0 << 8 | Int64($1) }
    }

    mutating func int8() throws -> Int8 { Int8(truncatingIfNeeded: try self.integer(1)) }
    mutating func int16() throws -> Int16 { Int16(truncatingIfNeeded: try self.integer(2)) }
    mutating func int32() throws -> Int32 { Int32(truncatingIfNeeded: try self.integer(4)) }
    mutating func int64() throws -> Int64 { try self.integer(8) }

    mutating func string() throws -> String? {
        let length = try self.int16()
        return length < 0 ? nil : String(decoding: try self.bytes(Int(length)), as: UTF8.self)
    }

    /// A zigzag varint.
    mutating func varint() throws -> Int64 {
        var raw: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = UInt64(try self.bytes(1).first!)
            raw |= (byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func varbytes() throws -> [UInt8]? {
        let length = try self.varint()
        return length < 0 ? nil : Array(try self.bytes(Int(length)))
    }

    /// The next whole batch, or `nil` at the end (a batch cut off by the fetch size included).
    mutating func batch() throws -> Batch? {
        guard self.bytes.count >= 12 else { return nil }
        var header = self
        let baseOffset = try header.int64()
        let length = Int(try header.int32())
        guard header.bytes.count >= length else { return nil }
        var batch = ByteReader(try header.bytes(length))
        self = header
        _ = try batch.int32()  // partition leader epoch
        guard try batch.int8() == 2 else { throw KafkaLogReader.Failure(description: "not a v2 record batch") }
        _ = try batch.int32()  // CRC
        let attributes = try batch.int16()
        guard attributes & 0x7 == 0 else { throw KafkaLogReader.Failure(description: "a compressed batch") }
        let lastOffsetDelta = try batch.int32()
        _ = try (batch.int64(), batch.int64())  // timestamps
        let producerID = try batch.int64()
        _ = try (batch.int16(), batch.int32())  // producer epoch, base sequence
        let count = try batch.int32()
        var records: [KafkaLogReader.Record] = []
        for _ in 0..<count {
            var record = ByteReader(try batch.bytes(Int(try batch.varint())))
            _ = try record.int8()
            _ = try record.varint()  // timestamp delta
            let offsetDelta = try record.varint()
            let key = try record.varbytes()
            let value = try record.varbytes()
            var headers: [(name: String, value: [UInt8]?)] = []
            for _ in 0..<(try record.varint()) {
                let name = String(decoding: try record.varbytes() ?? [], as: UTF8.self)
                headers.append((name, try record.varbytes()))
            }
            records.append(.init(offset: baseOffset + offsetDelta, key: key, value: value, headers: headers))
        }
        return Batch(
            lastOffset: baseOffset + Int64(lastOffsetDelta), isTransactional: attributes & 0x10 != 0,
            isControl: attributes & 0x20 != 0, producerID: producerID, records: records)
    }

    /// A control record's type (its key: version, type): 0 abort, 1 commit.
    mutating func controlType() -> Int16? {
        _ = try? self.int16()
        return try? self.int16()
    }
}

struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func integer(_ value: Int64, _ size: Int) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            self.bytes.append(UInt8(truncatingIfNeeded: value >> Int64(shift)))
        }
    }

    mutating func int8(_ value: Int8) { self.integer(Int64(value), 1) }
    mutating func int16(_ value: Int16) { self.integer(Int64(value), 2) }
    mutating func int32(_ value: Int32) { self.integer(Int64(value), 4) }
    mutating func int64(_ value: Int64) { self.integer(value, 8) }

    mutating func string(_ value: String) {
        self.int16(Int16(value.utf8.count))
        self.bytes += value.utf8
    }
}

/// A blocking TCP connection to the broker that sends a request and reads its size-prefixed answer.
final class Connection {
    private let fd: Int32

    init(port: UInt16) throws {
        self.fd = connectLoopback(port: port)
        guard self.fd >= 0 else {
            throw KafkaLogReader.Failure(description: "cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    func close() {
        Glibc.close(self.fd)
    }

    func roundTrip(_ request: [UInt8]) throws -> [UInt8] {
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(self.fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw KafkaLogReader.Failure(description: "send failed: errno \(errno)") }
            sent += count
        }
        var sizeReader = ByteReader(try self.receive(4))
        return try self.receive(Int(try sizeReader.int32()))
    }

    private func receive(_ count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let got = buffer[received...].withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
            guard got > 0 else { throw KafkaLogReader.Failure(description: "the broker closed the connection") }
            received += got
        }
        return buffer
    }
}
