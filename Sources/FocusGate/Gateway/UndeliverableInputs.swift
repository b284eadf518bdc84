import FocusGateKafka

/// Input records whose outputs the producer or the broker refused, and those to dead-letter when
/// they are replayed, so that one record cannot hold its partition in a loop of aborts.
///
/// A worker that aborts rewinds to the last commit and processes the same records again; a cause
/// that passes (a broker restart, a leader moving) is gone by then. A refusal of a record's own
/// output is not: an error about its size (`MSG_SIZE_TOO_LARGE`, `RECORD_LIST_TOO_LARGE`) would
/// come again on every replay, so the input is dead-lettered on the first one; another refusal of
/// the record itself (``isAboutRecord(_:)``: an invalid or corrupt record, a timestamp the topic
/// does not take) attributed to the same input `maxAttempts` times is too. A failure that is not
/// about the record (a broker down, a timeout, a purge, a missing permission) or that no input
/// can be blamed for (a changelog or badge record) never dead-letters anything: it pauses the
/// replays (``ReplayBackoff``) and shows in readiness.
///
/// Holds only the inputs that failed since their partition's last commit: a commit forgets
/// everything before its offsets.
struct UndeliverableInputs {
    /// An input record: its partition of the notifications topic and its offset.
    struct Position: Hashable, Sendable, CustomStringConvertible {
        var partition: Int32
        var offset: Int64

        var description: String { "\(self.partition)/\(self.offset)" }
    }

    /// Refusals of one input's outputs after which it is dead-lettered (`delivery.maxAttempts`).
    let maxAttempts: Int
    private var attempts: [Position: Int] = [:]
    private var deadLetters: [Position: KafkaError] = [:]

    init(maxAttempts: Int) {
        precondition(maxAttempts >= 1, "at least one attempt")
        self.maxAttempts = maxAttempts
    }

    /// Whether no input is to be dead-lettered: the record loop then asks nothing per record.
    var isEmpty: Bool { self.deadLetters.isEmpty }

    /// Whether `error`, refusing a record, is about the record's own size: the same record would
    /// be refused again.
    static func isAboutSize(_ error: KafkaError) -> Bool {
        error.code == .messageSizeTooLarge || error.code == .recordListTooLarge
    }

    /// Whether `error` refuses the record itself, not the moment or the cluster: its size, or a
    /// record the broker finds invalid (`INVALID_RECORD`, `CORRUPT_MESSAGE`, `INVALID_TIMESTAMP`).
    static func isAboutRecord(_ error: KafkaError) -> Bool {
        Self.isAboutSize(error) || Self.recordCodes.contains(error.code.rawValue)
    }

    /// `CORRUPT_MESSAGE`, `INVALID_TIMESTAMP`, `INVALID_RECORD`.
    private static let recordCodes: Set<Int32> = [2, 32, 87]

    /// An output of the input at `position` was refused with `error`; counted only when the
    /// refusal is about the record (``isAboutRecord(_:)``).
    ///
    /// - Returns: Whether the input is now to be dead-lettered on its replay.
    mutating func refused(_ position: Position, error: KafkaError) -> Bool {
        if self.deadLetters[position] != nil { return true }
        guard Self.isAboutRecord(error) else { return false }
        let count = (self.attempts[position] ?? 0) + 1
        self.attempts[position] = count
        guard Self.isAboutSize(error) || count >= self.maxAttempts else { return false }
        self.attempts[position] = nil
        self.deadLetters[position] = error
        return true
    }

    /// The refusal to dead-letter the input at `offset` of `partition` with, if it is one.
    func deadLetter(partition: Int32, offset: Int64) -> KafkaError? {
        self.deadLetters[Position(partition: partition, offset: offset)]
    }

    /// The refusals counted so far for `position` (0 once it is to be dead-lettered).
    func attempts(of position: Position) -> Int {
        self.attempts[position] ?? 0
    }

    /// A commit took these partitions to these offsets (the next to process): what came before
    /// is done with.
    mutating func committed(_ offsets: [Int32: Int64]) {
        guard !self.attempts.isEmpty || !self.deadLetters.isEmpty else { return }
        func pending(_ position: Position) -> Bool {
            offsets[position.partition].map { position.offset >= $0 } ?? true
        }
        self.attempts = self.attempts.filter { pending($0.key) }
        self.deadLetters = self.deadLetters.filter { pending($0.key) }
    }
}
