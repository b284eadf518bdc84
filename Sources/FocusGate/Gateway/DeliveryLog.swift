import FocusGateKafka

/// The outcome of every record the worker's producer sent, served on the worker's thread.
final class DeliveryLog {
    /// The first failed delivery since ``reset()``.
    private(set) var firstFailure: KafkaError?
    /// The first delivery since ``reset()`` refused for what the record is
    /// (``UndeliverableInputs/isAboutRecord(_:)``) of a record made from an input record (one
    /// whose `focusgate-source` names a record of the input topic), and that input.
    private(set) var firstRefusedInput: (position: UndeliverableInputs.Position, error: KafkaError)?
    /// The topic whose records' outputs are attributed to them; `nil`: none are.
    private let sourcePrefix: [UInt8]?

    init(inputTopic: String? = nil) {
        self.sourcePrefix = inputTopic.map { Array(($0 + "/").utf8) }
    }

    func record(_ report: KafkaDeliveryReport) {
        guard let error = report.error else { return }
        if self.firstFailure == nil { self.firstFailure = error }
        if self.firstRefusedInput == nil, UndeliverableInputs.isAboutRecord(error), let prefix = self.sourcePrefix,
            let source = report.header("focusgate-source"),
            let position = Self.position(source, prefix: prefix)
        {
            self.firstRefusedInput = (position, error)
        }
    }

    func reset() {
        self.firstFailure = nil
        self.firstRefusedInput = nil
    }

    /// The input a `focusgate-source` value (`topic/partition/offset`) names, when it is a record of
    /// the topic `prefix` (`topic/`) starts.
    static func position(_ source: [UInt8], prefix: [UInt8]) -> UndeliverableInputs.Position? {
        guard source.count > prefix.count, source.starts(with: prefix) else { return nil }
        let parts = source[prefix.count...].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 2, let partition = Int32(String(decoding: parts[0], as: UTF8.self)),
            let offset = Int64(String(decoding: parts[1], as: UTF8.self))
        else { return nil }
        return UndeliverableInputs.Position(partition: partition, offset: offset)
    }
}
