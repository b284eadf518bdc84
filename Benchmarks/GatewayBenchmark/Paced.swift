import FocusGate
import FocusGateKafka
import FocusGateThreads
import Foundation
import Synchronization

// MARK: - Offered load and its latency: records stamped when produced, read back from the outputs

/// Set once by one thread, read by another.
final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { self.value.store(true, ordering: .releasing) }
    var isSet: Bool { self.value.load(ordering: .acquiring) }
}

/// Wall-clock microseconds now: the producer stamps records with it and the reader compares.
func wallMicros() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
}

/// One stamped record's output as read back.
struct StampedOutput {
    /// When the input record was produced (wall µs).
    var sentAt: Int64
    /// When the gateway produced the output (its record timestamp, wall ms): the latency splits
    /// into the way in (the input's produce and fetch, the gateway's loop) and the way out (the
    /// output's produce and the reader's fetch).
    var outputAt: Int64
    /// How long from the input's production until the output was read (ms).
    var ms: Double

    /// Milliseconds from the input's production to the gateway producing the output.
    var inMilliseconds: Double { Double(self.outputAt * 1_000 - self.sentAt) / 1_000 }
}

/// Reads `outputs` (the delivered and silenced topics) from their current ends for up to
/// `seconds` (and until 90% of `expected` stamped records arrived once that time is nearly up);
/// returns every stamped record's output.
///
/// Call before producing; `ready` is set once the reader is positioned.
func readStampedOutputs(outputs: [String], expected: Int, seconds: Double, ready: Flag) throws -> [StampedOutput] {
    let consumer = try tailReader(of: outputs)
    ready.set()
    var latencies: [StampedOutput] = []
    latencies.reserveCapacity(expected)
    let deadline = ContinuousClock.now + .seconds(seconds + 20)
    while ContinuousClock.now < deadline {
        consumer.consumeBatch(maxRecords: 4096, timeout: .milliseconds(10)) { batch in
            let now = wallMicros()
            for record in batch {
                guard let value = record.value, let micros = sentAtMicros(in: value) else { continue }
                latencies.append(
                    StampedOutput(sentAt: micros, outputAt: record.timestamp ?? 0, ms: Double(now - micros) / 1000))
            }
        }
        if latencies.count >= Int(Double(expected) * 0.9), ContinuousClock.now > deadline - .seconds(19) { break }
    }
    return latencies
}

/// The `"sentAtUs":` stamp of an output's value, found by a byte loop over the buffer: the reader
/// must keep up with the gateway on the same two cores (a generic `firstRange(of:)` took a core at
/// 60,000 records/s and fell behind).
func sentAtMicros(in value: UnsafeRawBufferPointer) -> Int64? {
    let marker: StaticString = #""sentAtUs":"#
    let length = marker.utf8CodeUnitCount
    guard let base = value.baseAddress, value.count > length else { return nil }
    guard
        var index = (0...(value.count - length)).first(where: {
            value[$0] == UInt8(ascii: "\"") && memcmp(base + $0, marker.utf8Start, length) == 0
        })
    else { return nil }
    index += length
    var micros: Int64 = 0
    while index < value.count, value[index] >= 48, value[index] <= 57 {
        micros = micros * 10 + Int64(value[index] - 48)
        index += 1
    }
    return micros > 0 ? micros : nil
}

/// A consumer without a group, positioned at the current end of every partition of `topics`,
/// fetching with a 1 ms wait (the embedded broker holds a fetch for its whole wait when it has no data).
func tailReader(of topics: [String]) throws -> KafkaConsumer {
    var configuration = KafkaConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupID: nil)
    configuration.properties = ["fetch.wait.max.ms": "1"]
    let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
    var start: [KafkaTopicPartition] = []
    for name in topics {
        for partition in 0..<Int32(partitions) {
            let high = try consumer.watermarks(topic: name, partition: partition, timeout: .seconds(10)).high
            start.append(KafkaTopicPartition(topic: name, partition: partition, offset: high))
        }
    }
    try consumer.assign(start)
    return consumer
}

/// Produces `total` records to `topic` at `offered` per second (a burst every 200 µs), each
/// stamped when produced; record numbers start at `first`.
func producePaced(topic: String, offered: Double, total: Int, first: Int = 1_000_000) throws {
    let producer = try KafkaProducer(
        configuration: {
            var configuration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
            // No wait by default: each record goes out at once. A linger makes fewer, larger
            // batches, which the embedded broker walks faster (docs/performance.md, Latency).
            let linger = Int(ProcessInfo.processInfo.environment["BENCH_PACED_LINGER_MS"] ?? "") ?? 0
            configuration.linger = .milliseconds(linger)
            return configuration
        }(),
        logger: logger, onDeliveryReport: { _ in }
    )
    let handle = try producer.topic(topic)
    let begin = DispatchTime.now().uptimeNanoseconds
    var sent = 0
    while sent < total {
        let due = Int(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9 * offered)
        while sent < min(due, total) {
            let record = event(first + sent, sentAtMicros: wallMicros())
            try record.key.withUnsafeBytes { key in
                try record.value.withUnsafeBytes { value in
                    // The user's own partition, as in the warm-up and the history: a user's state lives in one.
                    try producer.produce(topic: handle, partition: record.partition, key: key, value: value)
                }
            }
            sent += 1
        }
        producer.poll()
        usleep(200)
    }
    try producer.flush(timeout: .seconds(30))
}

/// Offers stamped records to `topic` at `offered` per second for `seconds`, reading `outputs`
/// from their current ends meanwhile; returns each output's production time and latency.
func offerAndRead(
    topic: String, offered: Double, seconds: Double,
    outputs: [String] = [TopicNames().delivered, TopicNames().silenced]
) async throws -> [StampedOutput] {
    let total = Int(offered * seconds)
    let ready = Flag()
    let reader = Task {
        try await DedicatedThread.run(name: "reader") {
            try readStampedOutputs(outputs: outputs, expected: total, seconds: seconds, ready: ready)
        }
    }
    while !ready.isSet { try await Task.sleep(for: .milliseconds(10)) }
    _ = try await DedicatedThread.run(name: "paced-producer") {
        try producePaced(topic: topic, offered: offered, total: total)
    }
    return try await reader.value
}

/// What a `serve` spent per record consumed between two readings.
struct CostPerRecord {
    var cpuMicroseconds: Double
    /// The worker threads' share of ``cpuMicroseconds``.
    var workerCPUMicroseconds: Double
    var allocations: Double
    var produced: Double
    var changelogBytes: Double

    init(from before: Instance.Reading, to after: Instance.Reading) {
        let consumed = max(1, after.consumed - before.consumed)
        self.cpuMicroseconds = (after.cpuSeconds - before.cpuSeconds) * 1e6 / consumed
        self.workerCPUMicroseconds = (after.workerCPUSeconds - before.workerCPUSeconds) * 1e6 / consumed
        self.allocations = (after.allocations - before.allocations) / consumed
        self.produced = (after.produced - before.produced) / consumed
        self.changelogBytes = (after.changelogBytes - before.changelogBytes) / consumed
    }

    var text: String {
        String(
            format: "%.1f µs CPU, %.2f allocations, %.2f records produced, %.1f changelog B per record",
            self.cpuMicroseconds, self.allocations, self.produced, self.changelogBytes)
    }

    /// The JSON fields, without braces.
    var json: String {
        String(
            format: #""cpu_us":%.2f,"allocations":%.3f,"produced_per_consumed":%.3f,"changelog_bytes":%.1f"#,
            self.cpuMicroseconds, self.allocations, self.produced, self.changelogBytes)
    }
}

/// Offers records at `offered` per second for `seconds` to a fresh `serve` in `mode` (every
/// user's context cached first); returns the latencies (ms) from the record's production to the
/// output being read, sorted, and the part of them until the gateway produced the output (the way
/// in), sorted; what the `serve` process spent per record consumed meanwhile (at a
/// fixed rate this compares variants more steadily than a saturated run does: the same records
/// take the same commits); and the gateway's own record-to-commit latencies of the records
/// offered (`focusgate_commit_latency_seconds`, the buckets' counts taken before and after); and
/// how long each commit meanwhile held the worker's loop (`focusgate_commit_duration_seconds`).
func latencies(offered: Double, seconds: Double, mode: GatewayConfiguration.DeliveryMode = .atLeastOnce) async throws
    -> (latencies: [Double], inward: [Double], cost: CostPerRecord, toCommit: HistogramCounts, commits: HistogramCounts)
{
    let run = nextRun()
    let topic = "bench-latency-\(run)"
    // Outputs of this run only: the embedded broker finds a fetch's offset by walking the
    // partition's batches from the oldest, so a reader at the end of topics that every earlier
    // run wrote to would cost it more with each run.
    let outputs = ["bench-latency-delivered-\(run)", "bench-latency-silenced-\(run)"]
    for name in [topic] + outputs { try broker.createTopic(.init(name: name, partitions: partitions)) }
    var environment = try settings(mode, input: topic)
    environment["FOCUSGATE_TOPICS_DELIVERED"] = outputs[0]
    environment["FOCUSGATE_TOPICS_SILENCED"] = outputs[1]
    let instance = try await Instance(environment)
    while await instance.metric("focusgate_assigned_partitions") < Double(partitions) {
        try await Task.sleep(for: .milliseconds(50))
    }
    // Every user once (unstamped, so the reader skips them), so that their contexts are cached.
    try await DedicatedThread.run(name: "producer") { try produce(topic: topic, range: 0..<warmup) }
    while await instance.consumed < warmup { try await Task.sleep(for: progressInterval) }
    // The warm-up's last commit (badge updates and changelog of up to a commit interval of records
    // taken at full speed) is not the offered records' work: let it pass before the first reading.
    // It may have passed already, in which case no commit comes (nothing left to commit).
    let commits = #"focusgate_transactions_total{result="committed"}"#
    let warmedUp = await instance.serve.metric(commits)
    _ = try await instance.serve.waitForMetric(commits, atLeast: warmedUp + 1, timeout: commitInterval * 4)
    let before = await instance.reading()
    let metricsBefore = await instance.serve.metrics()
    let raw = try await offerAndRead(topic: topic, offered: offered, seconds: seconds, outputs: outputs)
    let after = await instance.reading()
    // Every offered record's output is read; the commit covering the last ones may still be due.
    let committed = await instance.serve.metric(commits)
    _ = try await instance.serve.waitForMetric(commits, atLeast: committed + 1, timeout: commitInterval * 4)
    let metricsAfter = await instance.serve.metrics()
    func since(_ name: String) -> HistogramCounts {
        HistogramCounts(metricsAfter, name: name).subtracting(HistogramCounts(metricsBefore, name: name))
    }
    if let dump = ProcessInfo.processInfo.environment["BENCH_DUMP"] {
        try raw.map { "\($0.sentAt) \($0.outputAt) \($0.ms)" }.joined(separator: "\n").write(
            toFile: dump, atomically: true, encoding: .utf8)
    }
    await instance.stop()
    return (
        raw.map(\.ms).sorted(), raw.map(\.inMilliseconds).sorted(), CostPerRecord(from: before, to: after),
        since("focusgate_commit_latency_seconds"), since("focusgate_commit_duration_seconds")
    )
}

/// A Prometheus histogram's cumulative bucket counts, by upper bound in seconds.
struct HistogramCounts {
    var buckets: [(upperBound: Double, count: Double)]

    /// The buckets of histogram `name` among `/metrics` samples.
    init(_ samples: [String: Double], name: String) {
        let prefix = "\(name)_bucket{le=\""
        self.buckets = samples.compactMap { key, value in
            guard key.hasPrefix(prefix) else { return nil }
            let bound = key.dropFirst(prefix.count).prefix { $0 != "\"" }
            guard let upperBound = bound == "+Inf" ? Double.infinity : Double(bound) else { return nil }
            return (upperBound, value)
        }.sorted { $0.upperBound < $1.upperBound }
    }

    private init(buckets: [(upperBound: Double, count: Double)]) { self.buckets = buckets }

    /// The counts observed since `earlier` (same buckets).
    func subtracting(_ earlier: HistogramCounts) -> HistogramCounts {
        HistogramCounts(
            buckets: self.buckets.enumerated().map { index, bucket in
                let before = index < earlier.buckets.count ? earlier.buckets[index].count : 0
                return (bucket.upperBound, bucket.count - before)
            })
    }

    var total: Double { self.buckets.last?.count ?? 0 }

    /// The value at quantile `p`, in milliseconds, interpolated linearly within its bucket (as
    /// PromQL's `histogram_quantile`); NaN when nothing was observed, the highest finite bound
    /// when it lies in the `+Inf` bucket.
    func quantileMilliseconds(_ p: Double) -> Double {
        guard self.total > 0 else { return .nan }
        let rank = p * self.total
        var lower = (bound: 0.0, count: 0.0)
        for bucket in self.buckets {
            if bucket.count >= rank {
                guard bucket.upperBound.isFinite else { return lower.bound * 1000 }
                let share = bucket.count > lower.count ? (rank - lower.count) / (bucket.count - lower.count) : 1
                return (lower.bound + (bucket.upperBound - lower.bound) * share) * 1000
            }
            lower = (bucket.upperBound, bucket.count)
        }
        return lower.bound * 1000
    }
}

extension HistogramCounts {
    /// Read as commit durations: how many, and their median and p99 (interpolated in buckets).
    var commitText: String {
        String(
            format: "%d commits holding the loop p50 %.1f ms · p99 %.1f ms", Int(self.total),
            self.quantileMilliseconds(0.5), self.quantileMilliseconds(0.99))
    }

    /// The same as JSON fields, without braces.
    var commitJSON: String {
        String(
            format: #""commits":%d,"commit_p50_ms":%.2f,"commit_p99_ms":%.2f"#, Int(self.total),
            self.quantileMilliseconds(0.5), self.quantileMilliseconds(0.99))
    }
}

/// The latency row (markdown and JSON) of `offered` records/s for `seconds`, described by `label`.
func latencyRow(offered: Double, seconds: Double, label: String? = nil) async throws -> (
    name: String, value: String, json: String
) {
    let (latencies, inward, cost, _, commits) = try await latencies(offered: offered, seconds: seconds)
    let (p50, p99, p999) = (percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(latencies, 0.999))
    let (inP50, inP99) = (percentile(inward, 0.5), percentile(inward, 0.99))
    log(
        "latency at \(format(offered)) records/s: p50 \(p50) p99 \(p99) p99.9 \(p999) ms (until the gateway's output p50 \(inP50) p99 \(inP99) ms); \(commits.commitText); \(cost.text)"
    )
    return (
        "latency at \(format(offered)) records/s offered\(label.map { " (\($0))" } ?? ""), at-least-once (goal: p99 ≤ 60 ms at 60,000 records/s offered)",
        String(
            format:
                "p50 %.1f ms · p99 %.1f ms · p99.9 %.1f ms (%d records; until the gateway's output p50 %.1f ms · p99 %.1f ms); ",
            p50, p99, p999, latencies.count, inP50, inP99)
            + commits.commitText + "; " + cost.text,
        #"{"benchmark":"latency","mode":"at-least-once","offered_per_s":\#(format(offered)),"records":\#(latencies.count),"p50_ms":\#(String(format: "%.2f", p50)),"p99_ms":\#(String(format: "%.2f", p99)),"p999_ms":\#(String(format: "%.2f", p999)),"to_output_p50_ms":\#(String(format: "%.2f", inP50)),"to_output_p99_ms":\#(String(format: "%.2f", inP99)),\#(commits.commitJSON),\#(cost.json)}"#
    )
}

/// The value at quantile `p` of sorted `values` (NaN when empty).
func percentile(_ values: [Double], _ p: Double) -> Double {
    values.isEmpty ? .nan : values[min(values.count - 1, Int(Double(values.count) * p))]
}

/// The exactly-once latency row of `offered` records/s for `seconds`: record timestamp to the
/// commit of the transaction that holds its outputs, from the gateway's histogram. On a real
/// cluster a `read_committed` consumer can read the outputs from then on (plus its fetch); the
/// embedded broker writes no transaction markers, so reading the outputs back cannot show it.
func commitLatencyRow(offered: Double, seconds: Double, label: String) async throws -> (
    name: String, value: String, json: String
) {
    let (_, _, cost, toCommit, commits) = try await latencies(offered: offered, seconds: seconds, mode: .exactlyOnce)
    let (p50, p99) = (toCommit.quantileMilliseconds(0.5), toCommit.quantileMilliseconds(0.99))
    let goal = commitInterval / .milliseconds(1) + 60
    log(
        "exactly-once latency to commit at \(format(offered)) records/s: p50 \(p50) p99 \(p99) ms (\(toCommit.total) samples); \(commits.commitText); \(cost.text)"
    )
    return (
        "latency to commit at \(format(offered)) records/s offered (\(label)), exactly-once (goal at 60,000 records/s offered: p99 ≤ commit interval + 60 ms = \(format(goal)) ms)",
        String(format: "p50 %.1f ms · p99 %.1f ms (%d records sampled); ", p50, p99, Int(toCommit.total))
            + commits.commitText + "; " + cost.text,
        #"{"benchmark":"latency-to-commit","mode":"exactly-once","offered_per_s":\#(format(offered)),"samples":\#(Int(toCommit.total)),"p50_ms":\#(String(format: "%.2f", p50)),"p99_ms":\#(String(format: "%.2f", p99)),"goal_ms":\#(format(goal)),\#(commits.commitJSON),\#(cost.json)}"#
    )
}
