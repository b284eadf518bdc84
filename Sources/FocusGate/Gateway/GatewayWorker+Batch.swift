import FocusGateCore
import FocusGateKafka

// MARK: - The hot path: one consumed batch

extension GatewayWorker {
    /// Decodes the batch, resolves its users' contexts with one cache call, then decides and
    /// produces record by record: outputs with the input's key, value and headers unchanged (its
    /// headers first, FocusGate's after), DLQ records, badge updates.
    ///
    /// - Throws: ``KafkaError`` from the producer; the caller aborts and rewinds (or stops when fatal).
    func process(_ batch: KafkaRecordBatch) throws(KafkaError) {
        for error in batch.errors {
            self.logger.warning("consumer error", metadata: ["kafka.error": "\(error)"])
        }
        guard !batch.isEmpty else { return }

        // Pass 1: routing fields and users, no output yet. One access to the worker's buffers
        // for the whole pass (each access to a class's stored property is an exclusivity check at
        // run time; within the buffers' own method, none is).
        // No rebalance comes within a batch: the partitions owned stay as they are.
        let partitions = self.partitions
        self.buffers.decode(batch, owned: partitions, with: self.decoder)
        self.cache.lookups(self.buffers.users, hashes: self.buffers.userHashes, into: &self.buffers.contexts)
        let now = self.configuration.clock.nowMilliseconds()
        self.buffers.decidedAt.removeAll(keepingCapacity: true)
        DecimalText.append(now, to: &self.buffers.decidedAt)
        try self.beginTransactionIfNeeded()

        // Pass 2: decide, update state, produce. What the loop reads of the worker's properties for
        // every record is read once here (each read of a class's stored property is an
        // exclusivity check at run time), and its counts are added to them once.
        var counts = BatchCounts()
        var processed = 0
        var produced = 0
        let contexts = self.buffers.contexts
        let userHashes = self.buffers.userHashes
        let producer = self.outputs.producer
        let topics = (delivered: self.outputs.delivered, silenced: self.outputs.silenced)
        let deliveryID = self.outputs.ledger.current
        let decidedAt = self.buffers.decidedAt
        let names = self.outputHeaders
        let rateLimits = self.configuration.rateLimits
        let repeatedWindow = self.repeatedWindowMilliseconds
        // Inputs to dead-letter on this replay: none, but for a record whose outputs were refused.
        let undeliverable = self.undeliverable.isEmpty ? nil : self.undeliverable
        // The header buffer and the decoded records are taken for the batch (swaps: their storage
        // is kept, not copied), so that each record's event is moved out, not copied.
        var headers = KafkaHeaderBuffer([])
        swap(&headers, &self.buffers.headers)
        var decoded: [Decoded] = []
        swap(&decoded, &self.buffers.decoded)
        // Counted even when a produce error cuts the batch short: the abort replays these too,
        // and the records produced before it are in the interval's acknowledgement count.
        defer {
            swap(&headers, &self.buffers.headers)
            swap(&decoded, &self.buffers.decoded)
            self.processedSinceCommit += processed
            self.outputs.ledger.produced += produced
        }
        var owner = PartitionRun()
        for (position, record) in batch.enumerated() {
            // Pass 1 took only records of owned partitions.
            guard let progress = owner.partition(of: record, in: partitions) else { continue }
            let item = exchange(&decoded[position], with: .skipped)
            if case .skipped = item { continue }
            if let refusal = undeliverable?.deadLetter(partition: record.partition, offset: record.offset) {
                processed += 1
                try self.deadLetterUndeliverable(
                    record, refusal: refusal, progress: progress, deliveryID: deliveryID, into: &headers)
                produced += 1
                counts.deadLetters[.undeliverable, default: 0] += 1
                progress.next = record.offset + 1
                continue
            }
            switch item {
            case .skipped:
                continue
            case .invalid(let error):
                processed += 1
                // A record whose copy would not fit a record goes to the DLQ bounded (a produce
                // the producer refuses would stop the partition for good).
                let bounded =
                    error.code == .tooLarge
                    && (record.key?.count ?? 0) + (record.value?.count ?? 0) + record.headerBytes
                        > self.configuration.maxCopyBytes
                Self.writeErrorHeaders(
                    error, record: record, sourcePrefix: progress.sourcePrefix, names: names, withInput: !bounded,
                    into: &headers)
                do {
                    try producer.produce(
                        topic: self.outputs.deadLetters,
                        key: bounded ? Self.boundedPrefix(record.key, Self.boundedKeyBytes) : record.key,
                        value: bounded ? Self.boundedPrefix(record.value, Self.boundedValueBytes) : record.value,
                        headers: headers, deliveryID: deliveryID)
                } catch {
                    self.refusedInput = .init(partition: record.partition, offset: record.offset)
                    throw error
                }
                produced += 1
                counts.deadLetters[error.code, default: 0] += 1
            case .event(let event, let user):
                processed += 1
                // A changed badge waits in the state for the commit (coalesced per interval).
                let applied = progress.state.apply(
                    event, lookup: contexts[user], nowMilliseconds: now, sentAtMilliseconds: record.timestamp ?? now,
                    defaultRateLimits: rateLimits, repeatedWindowMilliseconds: repeatedWindow,
                    sourceOffset: record.offset, userHash: userHashes[user])
                if let decision = applied.decision {
                    let outcome = decision.outcome == .delivered ? 0 : 1
                    Self.writeDecisionHeaders(
                        decision, record: record, sourcePrefix: progress.sourcePrefix,
                        decidedAt: decidedAt, names: names, into: &headers)
                    do {
                        try producer.produce(
                            topic: outcome == 0 ? topics.delivered : topics.silenced,
                            key: record.key, value: record.value, headers: headers,
                            deliveryID: deliveryID)
                    } catch {
                        self.refusedInput = .init(partition: record.partition, offset: record.offset)
                        throw error
                    }
                    produced += 1
                    counts.count(outcome: outcome, reason: decision.reason.index)
                } else if applied.admission == .duplicate {
                    counts.duplicates += 1
                }
            }
            progress.next = record.offset + 1
        }
        counts.consumed = batch.count
        counts.add(to: self.metrics)
        self.progress.consumed.add(batch.count, ordering: .relaxed)
        self.sampleLatency(batch, nowMilliseconds: now)
        // The first records since the commit bring it forward by their age (see CommitSchedule).
        let age = batch[0].timestamp.map { now - $0 } ?? 0
        self.commitSchedule.recordsTaken(at: .now, age: .milliseconds(age))
    }

    /// The owned partition of each record of a batch, looked up again only when the partition
    /// differs from the record before's: a batch holds runs of one partition's records.
    struct PartitionRun {
        private var last: (partition: Int32, owned: Partition?)?

        mutating func partition(of record: KafkaRecord, in partitions: [Int32: Partition]) -> Partition? {
            if let last = self.last, last.partition == record.partition { return last.owned }
            let owned = partitions[record.partition]
            self.last = (record.partition, owned)
            return owned
        }
    }

    /// The headers of a decided notification into `headers` (the batch's buffer): the input
    /// record's own, unchanged and in order, then the `focusgate-*` ones (docs/contract.md,
    /// Outputs). What does not change from record to record was encoded once (`names`: the
    /// outcome and reason headers as one block, each name with its NUL), what the batch's
    /// records share once per batch (the decision's instant); per record only the focus, the
    /// offset and the context version are written.
    private static func writeDecisionHeaders(
        _ decision: Decision, record: KafkaRecord, sourcePrefix: [UInt8], decidedAt: [UInt8], names: OutputHeaders,
        into headers: inout KafkaHeaderBuffer
    ) {
        headers.removeAll()
        record.appendHeaders(to: &headers)
        headers.append(names.verdict(decision))
        if let focus = decision.focus {
            headers.append(names.focus, value: focus)
        }
        if let version = decision.contextVersion {
            headers.append(names.contextVersion) { DecimalText.append(version, to: &$0) }
        }
        Self.appendSourceHeader(record, prefix: sourcePrefix, names: names, to: &headers)
        headers.append(names.decidedAt, value: decidedAt)
    }

    /// The headers of a record sent to the DLQ into `headers`: the input record's own (unless
    /// the record goes bounded), then the error's code and detail and the source.
    private static func writeErrorHeaders(
        _ error: EventDecodingError, record: KafkaRecord, sourcePrefix: [UInt8], names: OutputHeaders,
        withInput: Bool, into headers: inout KafkaHeaderBuffer
    ) {
        headers.removeAll()
        if withInput { record.appendHeaders(to: &headers) }
        headers.append(name: "focusgate-error", value: error.code.rawValue)
        let detail = error.description.utf8
        headers.append(
            name: "focusgate-error-detail",
            value: detail.count <= Self.detailBytes
                ? error.description : String(decoding: detail.prefix(Self.detailBytes), as: UTF8.self))
        Self.appendSourceHeader(record, prefix: sourcePrefix, names: names, to: &headers)
    }

    /// An input whose outputs were refused (``UndeliverableInputs``) to the DLQ, bounded as a
    /// too-large one is (its first bytes, none of its headers: they may be what was refused),
    /// with the refusal's Kafka error in its detail. Nothing of it reaches the state.
    private func deadLetterUndeliverable(
        _ record: KafkaRecord, refusal: KafkaError, progress: Partition, deliveryID: UInt64,
        into headers: inout KafkaHeaderBuffer
    ) throws(KafkaError) {
        let error = EventDecodingError(
            code: .undeliverable,
            detail:
                "its outputs were refused (\(refusal.code.name)): \(refusal.message); "
                + "\((record.key?.count ?? 0) + (record.value?.count ?? 0) + record.headerBytes) bytes with key and headers"
        )
        Self.writeErrorHeaders(
            error, record: record, sourcePrefix: progress.sourcePrefix, names: self.outputHeaders, withInput: false,
            into: &headers)
        try self.outputs.producer.produce(
            topic: self.outputs.deadLetters, key: Self.boundedPrefix(record.key, Self.boundedKeyBytes),
            value: Self.boundedPrefix(record.value, Self.boundedValueBytes), headers: headers, deliveryID: deliveryID)
    }

    /// What a bounded DLQ record keeps of a too-large input's key and value: their first bytes.
    static let boundedKeyBytes = 256
    static let boundedValueBytes = 1024
    /// The longest `focusgate-error-detail`.
    static let detailBytes = 1024

    /// The first `count` bytes of `bytes`.
    private static func boundedPrefix(_ bytes: UnsafeRawBufferPointer?, _ count: Int) -> UnsafeRawBufferPointer? {
        guard let bytes, bytes.count > count else { return bytes }
        return UnsafeRawBufferPointer(rebasing: bytes[0..<count])
    }

    /// `focusgate-source`: `topic/partition/offset`, from the partition's `topic/partition/`.
    private static func appendSourceHeader(
        _ record: KafkaRecord, prefix: [UInt8], names: OutputHeaders, to headers: inout KafkaHeaderBuffer
    ) {
        headers.append(names.source) { bytes in
            bytes.append(contentsOf: prefix)
            DecimalText.append(record.offset, to: &bytes)
        }
    }

    func beginTransactionIfNeeded() throws(KafkaError) {
        guard self.configuration.deliveryMode == .exactlyOnce, !self.transactionOpen else { return }
        try self.outputs.producer.beginTransaction()
        self.transactionOpen = true
    }

    private func sampleLatency(_ batch: KafkaRecordBatch, nowMilliseconds: Int64) {
        let step = max(1, batch.count / GatewayMetrics.latencySamplesPerBatch)
        for position in stride(from: 0, to: batch.count, by: step) {
            guard let timestamp = batch[position].timestamp, timestamp <= nowMilliseconds else { continue }
            self.metrics.decisionLatency.record(.milliseconds(nowMilliseconds - timestamp))
            if self.commitLatencySamples.count < GatewayMetrics.commitLatencySamplesPerCommit {
                self.commitLatencySamples.append(timestamp)
            }
        }
    }
}
