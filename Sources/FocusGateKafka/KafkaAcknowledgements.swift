internal import Crdkafka
import Synchronization

/// How many of a producer's records the cluster acknowledged, and how many failed for good, by
/// group: a record produced with a nonzero `deliveryID` is counted in slot `deliveryID %`
/// ``slotCount``. librdkafka counts them on its own threads as it learns of each (an
/// `on_acknowledgement` interceptor), before any delivery report, so a producer that reports
/// failures only (``KafkaProducerConfiguration/reportsFailuresOnly``) still tells its owner when a
/// group of records is all written: without a report per record and without a flush.
///
/// A record that librdkafka refuses inside the produce call (an unknown partition) is counted as
/// failed there too. Records produced with `deliveryID` 0 are not counted.
///
/// `@unchecked Sendable`: the counters are atomics; librdkafka's threads add to them while the
/// producer's owner reads and resets them.
public final class KafkaAcknowledgements: @unchecked Sendable {
    /// Groups counted apart; ids that are equal modulo this share a slot.
    public static let slotCount = 4096

    /// Per slot, records delivered at `2 * slot` and records failed at `2 * slot + 1`.
    private let counters: UnsafeMutablePointer<Atomic<Int>>

    package init() {
        self.counters = .allocate(capacity: 2 * Self.slotCount)
        for index in 0..<(2 * Self.slotCount) {
            (self.counters + index).initialize(to: Atomic(0))
        }
    }

    deinit {
        _ = self.counters.deinitialize(count: 2 * Self.slotCount)
        self.counters.deallocate()
    }

    private static func slot(_ deliveryID: UInt64) -> Int {
        Int(deliveryID % UInt64(Self.slotCount))
    }

    /// The records of `deliveryID`'s slot acknowledged since it was last reset: written, and
    /// failed for good (each failed one also has its delivery report).
    public func counts(of deliveryID: UInt64) -> (delivered: Int, failed: Int) {
        let slot = Self.slot(deliveryID)
        return (
            self.counters[2 * slot].load(ordering: .acquiring),
            self.counters[2 * slot + 1].load(ordering: .acquiring)
        )
    }

    /// Starts `deliveryID`'s slot again from zero. Only once every record counted there has been
    /// acknowledged: one acknowledged after the reset would be counted against the next group.
    public func reset(_ deliveryID: UInt64) {
        let slot = Self.slot(deliveryID)
        self.counters[2 * slot].store(0, ordering: .releasing)
        self.counters[2 * slot + 1].store(0, ordering: .releasing)
    }

    /// One record acknowledged (on a librdkafka thread; tests call it to stand in for one).
    package func acknowledged(_ deliveryID: UInt64, failed: Bool) {
        let index = 2 * Self.slot(deliveryID) + (failed ? 1 : 0)
        self.counters[index].wrappingAdd(1, ordering: .releasing)
    }

    /// Has the client made from `conf` count its acknowledgements here. The client must not
    /// outlive this object.
    func install(on conf: OpaquePointer) throws(KafkaError) {
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        try KafkaError.check(
            rd_kafka_conf_interceptor_add_on_new(conf, "focusgate-acknowledgements", rdkafkaOnNew, opaque),
            "acknowledgement counting")
    }
}

/// When the client is created: adds the acknowledgement counter to it.
private func rdkafkaOnNew(
    _ rk: OpaquePointer?, _ conf: OpaquePointer?, _ opaque: UnsafeMutableRawPointer?,
    _ errorText: UnsafeMutablePointer<CChar>?, _ errorTextSize: Int
) -> rd_kafka_resp_err_t {
    rd_kafka_interceptor_add_on_acknowledgement(rk, "focusgate-acknowledgements", rdkafkaOnAcknowledgement, opaque)
}

/// On librdkafka's threads (or in the produce call that refused the record): counts the record
/// when it was produced with a delivery id. Must not call librdkafka or block.
private func rdkafkaOnAcknowledgement(
    _ rk: OpaquePointer?, _ message: UnsafeMutablePointer<rd_kafka_message_t>?, _ opaque: UnsafeMutableRawPointer?
) -> rd_kafka_resp_err_t {
    guard let message, let opaque else { return RD_KAFKA_RESP_ERR_NO_ERROR }
    let deliveryID = UInt64(UInt(bitPattern: message.pointee._private))
    guard deliveryID != 0 else { return RD_KAFKA_RESP_ERR_NO_ERROR }
    Unmanaged<KafkaAcknowledgements>.fromOpaque(opaque).takeUnretainedValue()
        .acknowledged(deliveryID, failed: message.pointee.err != RD_KAFKA_RESP_ERR_NO_ERROR)
    return RD_KAFKA_RESP_ERR_NO_ERROR
}
