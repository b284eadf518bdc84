import FocusGateCore
import FocusGateKafka

extension GatewayWorker {
    /// A record of the batch after the decoding pass.
    enum Decoded {
        /// A valid event, with its position in the batch's user lists.
        case event(NotificationEvent, user: Int)
        case invalid(EventDecodingError)
        /// Not of an owned partition, or turned away by ``Partition/accepts(offset:)``; also what
        /// the deciding pass leaves where it moved an event out.
        case skipped
    }

    /// What each batch reuses of the one before: its decoded records, users, their hashes and
    /// contexts, the output header buffer and the decision's instant, and the identifier pool.
    ///
    /// A struct held by the worker, so that a pass over the batch is one access to the worker's
    /// property (an exclusivity check at run time) and none per record: the decoding pass runs
    /// in ``decode(_:owned:with:)``, the deciding pass takes ``headers`` and ``decoded`` out by
    /// swaps (and moves each event out of ``decoded``).
    struct BatchBuffers {
        var decoded: [Decoded] = []
        /// The users of the batch's events, their ids' hashes and their contexts, one per event
        /// (``Decoded/event(_:user:)`` holds the position).
        var users: [String] = []
        var userHashes: [UInt64] = []
        var contexts: [ContextLookup] = []
        /// The headers of the record being produced, rebuilt in place.
        var headers = KafkaHeaderBuffer()
        /// The `focusgate-decided-at` value of the batch: one instant for the whole batch.
        var decidedAt: [UInt8] = []
        /// App ids and filter criteria of the records decoded so far, so that a long one is not a
        /// new String per record.
        var identifiers = IdentifierPool()

        /// Pass 1 of a batch: each record of an owned partition decoded (or refused), its user
        /// noted and hashed once (the cache and the partition state find the user with the hash).
        mutating func decode(
            _ batch: KafkaRecordBatch, owned partitions: [Int32: Partition], with decoder: EventDecoder
        ) {
            self.decoded.removeAll(keepingCapacity: true)
            self.users.removeAll(keepingCapacity: true)
            self.userHashes.removeAll(keepingCapacity: true)
            var owner = PartitionRun()
            for record in batch {
                guard owner.partition(of: record, in: partitions)?.accepts(offset: record.offset) ?? false else {
                    self.decoded.append(.skipped)
                    continue
                }
                // The whole record counts, key and headers too: its copy to an output or the DLQ
                // carries them, and must fit the producer's message.max.bytes with FocusGate's
                // own headers (ServerConfiguration checks the limits against it).
                let bytes = (record.key?.count ?? 0) + (record.value?.count ?? 0) + record.headerBytes
                guard bytes <= decoder.maxEventBytes else {
                    self.decoded.append(
                        .invalid(
                            EventDecodingError(
                                code: .tooLarge,
                                detail:
                                    "\(bytes) bytes with key and headers (value \(record.value?.count ?? 0)), limit \(decoder.maxEventBytes)"
                            )))
                    continue
                }
                do {
                    let event = try decoder.decode(value: record.value, key: record.key, identifiers: &self.identifiers)
                    let position = self.users.count
                    self.users.append(event.userID)
                    self.userHashes.append(IdentifierIndex.hash(event.userID))
                    self.decoded.append(.event(consume event, user: position))
                } catch {
                    self.decoded.append(.invalid(error))
                }
            }
        }
    }

    /// The `focusgate-*` headers of the outputs (docs/contract.md, Outputs) with what does not
    /// change from record to record encoded once per worker: each outcome and reason pair as
    /// one block of two headers, each other name with the NUL that ends it.
    struct OutputHeaders {
        /// `focusgate-decision` and `focusgate-reason`, at `outcome × reasons + reason`
        /// (delivered 0, silenced 1).
        private let verdicts: [KafkaEncodedHeaders]
        private let reasons = Decision.Reason.all.count
        let focus = KafkaEncodedHeaders.Name("focusgate-focus")
        let contextVersion = KafkaEncodedHeaders.Name("focusgate-context-version")
        let source = KafkaEncodedHeaders.Name("focusgate-source")
        let decidedAt = KafkaEncodedHeaders.Name("focusgate-decided-at")

        init() {
            self.verdicts = [Decision.Outcome.delivered, .silenced].flatMap { outcome in
                Decision.Reason.all.map { reason in
                    KafkaEncodedHeaders([
                        KafkaHeader(name: "focusgate-decision", value: outcome.rawValue),
                        KafkaHeader(name: "focusgate-reason", value: reason.rawValue),
                    ])
                }
            }
        }

        /// The decision's `focusgate-decision` and `focusgate-reason` headers.
        func verdict(_ decision: Decision) -> KafkaEncodedHeaders {
            self.verdicts[(decision.outcome == .delivered ? 0 : self.reasons) + decision.reason.index]
        }
    }
}
