/// A record's headers written into one byte buffer that is reused from record to record: the
/// producer copies them at `produce`, so once the buffer has grown, building and sending headers
/// allocates nothing on the Swift side.
///
/// Names are stored NUL-terminated next to their values, in order; a header may have no value.
///
/// The appending methods are `@inlinable`: called from another module, a generic one that is not
/// specialized for the caller's collection walks it byte by byte through witness tables;
/// specialized, it is a copy.
public struct KafkaHeaderBuffer: Sendable {
    @usableFromInline var bytes: [UInt8] = []
    /// Per header: where its name starts, where its value starts, the value's length (`-1`: none).
    @usableFromInline var entries: [(name: Int, value: Int, length: Int)] = []

    /// Creates an empty buffer.
    public init() {
        self.bytes.reserveCapacity(512)
        self.entries.reserveCapacity(16)
    }

    /// Creates a buffer holding `headers`, in order. No headers, no storage: a record produced
    /// without headers (a badge update, a status, a changelog record) allocates nothing for them.
    public init(_ headers: [KafkaHeader]) {
        for header in headers { self.append(header) }
    }

    /// Headers written.
    @inlinable
    public var count: Int { self.entries.count }

    /// Forgets every header, keeping the storage.
    @inlinable
    public mutating func removeAll() {
        self.bytes.removeAll(keepingCapacity: true)
        self.entries.removeAll(keepingCapacity: true)
    }

    /// Appends a header whose value is `value`'s bytes (`nil`: no value).
    @inlinable
    public mutating func append(name: String, value: (some Collection<UInt8>)?) {
        self.append(nameBytes: name.utf8, value: value)
    }

    /// Appends a header whose name is `nameBytes` (UTF-8, without a NUL) and whose value is
    /// `value`'s bytes (`nil`: no value).
    @inlinable
    public mutating func append(nameBytes: some Collection<UInt8>, value: (some Collection<UInt8>)?) {
        let nameStart = self.startHeader(nameBytes)
        guard let value else {
            self.entries.append((nameStart, self.bytes.count, -1))
            return
        }
        let valueStart = self.bytes.count
        self.bytes.append(contentsOf: value)
        self.entries.append((nameStart, valueStart, self.bytes.count - valueStart))
    }

    /// Appends a header whose value is the UTF-8 of `value`.
    @inlinable
    public mutating func append(name: String, value: String) {
        self.append(name: name, value: value.utf8)
    }

    /// Appends a header.
    public mutating func append(_ header: KafkaHeader) {
        self.append(name: header.name, value: header.value)
    }

    /// Appends a header whose value `write` appends to the bytes it is given.
    @inlinable
    public mutating func append(name: String, writing write: (inout [UInt8]) -> Void) {
        let nameStart = self.startHeader(name.utf8)
        let valueStart = self.bytes.count
        write(&self.bytes)
        self.entries.append((nameStart, valueStart, self.bytes.count - valueStart))
    }

    /// Appends headers encoded once (see ``KafkaEncodedHeaders``): one copy of their bytes.
    @inlinable
    public mutating func append(_ encoded: KafkaEncodedHeaders) {
        let base = self.bytes.count
        self.bytes.append(contentsOf: encoded.bytes)
        for entry in encoded.entries {
            self.entries.append((entry.name + base, entry.value + base, entry.length))
        }
    }

    /// Appends a header named by an encoded ``KafkaEncodedHeaders/Name`` whose value is `value`.
    @inlinable
    public mutating func append(_ name: KafkaEncodedHeaders.Name, value: [UInt8]) {
        self.append(name) { $0.append(contentsOf: value) }
    }

    /// Appends a header named by an encoded ``KafkaEncodedHeaders/Name`` whose value is the
    /// UTF-8 of `value`, copied from the string's storage.
    @inlinable
    public mutating func append(_ name: KafkaEncodedHeaders.Name, value: String) {
        var value = value
        value.withUTF8 { utf8 in self.append(name) { $0.append(contentsOf: utf8) } }
    }

    /// Appends a header named by an encoded ``KafkaEncodedHeaders/Name`` whose value `write`
    /// appends to the bytes it is given.
    @inlinable
    public mutating func append(_ name: KafkaEncodedHeaders.Name, writing write: (inout [UInt8]) -> Void) {
        let nameStart = self.bytes.count
        self.bytes.append(contentsOf: name.bytes)
        let valueStart = self.bytes.count
        write(&self.bytes)
        self.entries.append((nameStart, valueStart, self.bytes.count - valueStart))
    }

    /// The headers as values (for tests and logs).
    public var headers: [KafkaHeader] {
        self.entries.map { entry in
            let nameEnd = self.bytes[entry.name...].firstIndex(of: 0)!
            let name = String(decoding: self.bytes[entry.name..<nameEnd], as: UTF8.self)
            let value = entry.length < 0 ? nil : Array(self.bytes[entry.value..<(entry.value + entry.length)])
            return KafkaHeader(name: name, value: value)
        }
    }

    @inlinable
    mutating func startHeader(_ name: some Collection<UInt8>) -> Int {
        let start = self.bytes.count
        self.bytes.append(contentsOf: name)
        self.bytes.append(0)
        return start
    }
}

/// Headers whose names and values do not change from record to record (a decision's outcome and
/// reason), encoded once: ``KafkaHeaderBuffer/append(_:)`` copies their bytes and offsets, where
/// appending them by name and value would copy each string's UTF-8 again for every record.
public struct KafkaEncodedHeaders: Sendable {
    @usableFromInline let bytes: [UInt8]
    /// As ``KafkaHeaderBuffer``'s, relative to `bytes`.
    @usableFromInline let entries: [(name: Int, value: Int, length: Int)]

    /// Encodes `headers`, in order.
    public init(_ headers: [KafkaHeader]) {
        let buffer = KafkaHeaderBuffer(headers)
        self.bytes = buffer.bytes
        self.entries = buffer.entries
    }

    /// The headers as values (for tests).
    public var headers: [KafkaHeader] {
        var buffer = KafkaHeaderBuffer([])
        buffer.append(self)
        return buffer.headers
    }

    /// A header's name encoded once (its UTF-8 and the NUL that ends it), for a value written per
    /// record.
    public struct Name: Sendable {
        @usableFromInline let bytes: [UInt8]

        /// Encodes `name`.
        public init(_ name: String) {
            self.bytes = Array(name.utf8) + [0]
        }
    }
}
