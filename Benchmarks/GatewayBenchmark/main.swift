// End-to-end figures of the notification pipeline on the embedded broker, in one run, with
// `focusgate serve` (the release binary next to this one) as a child process:
// - throughput of the gateway against a raw pass-through (consume → produce unchanged, same
//   topics, partitions, batching and commit interval, no logic), at-least-once and exactly-once;
// - latency at a fixed offered rate (half the measured maximum), record timestamp to output readable;
// - scale: one worker against two, two instances against one.
// Steady state: every user starts with history (BENCH_HISTORY earlier notifications, 10 by default,
// half of them read, in the state changelog each `serve` restores); the measured records go to
// Zipf-distributed users (s = 1), with reads of the user's own recent notifications and clears.
// Per record it reports CPU µs of the `serve` process, heap allocations of its worker threads
// (counted by libMallocCounter.so, preloaded), changelog bytes and records produced.
// Prints a markdown table and one JSON line per figure.
//
//   swift run -c release GatewayBenchmark [records] [rounds]
//   swift run -c release GatewayBenchmark latency RATE…   (latency alone, at each offered rate)
//   swift run -c release GatewayBenchmark restart   (a restarted instance's backlog, users with 1
//   and with 50 earlier notifications; BENCH_RESTART_USERS users, BENCH_ROUNDS rounds)
//   swift run -c release GatewayBenchmark restore   (`serve` started on BENCH_RESTORE_USERS users'
//   state, 1,000,000 by default, in BENCH_RESTORE_PARTITIONS partitions: time to output, memory)
//   BENCH_PACED_LINGER_MS sets the paced producer's linger (0 by default; the latency counts
//   from the produce call, so a linger's wait is included); BENCH_DUMP=FILE writes each
//   latency sample of the latency runs (produced at, µs; the output's record timestamp, ms;
//   latency, ms), one per line. A latency row also gives the part until the gateway produced the
//   output (its record timestamp): the way in, apart from the output's way to the reader.
//   BENCH_EXACTLY_ONCE=1 adds, to each latency rate, an exactly-once run's latency to commit.
//   BENCH_TRACE=1 adds progress every 100 ms, cache hits and misses, and each worker's timing.
//   BENCH_COMMIT_MS sets the commit interval (250 ms by default).
//   BENCH_BASELINE=PATH also runs another `focusgate` binary (the one before a change) in each
//   round, alternating with this one, and reports this one's rate, CPU and allocations per record
//   as ratios to it; BENCH_SERVE=PATH measures that binary (or script) instead of the one next to
//   the benchmark; BENCH_SKIP_SCALE=1 leaves out the scale and latency runs; BENCH_WARM=COMMAND
//   runs COMMAND with serve's pid once it is warm, before the measured records (with serve under
//   callgrind: `callgrind_control --zero`, so that the counts leave out the warm-up).
import BenchmarkSupport
import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateStore
import FocusGateThreads
import Foundation
import Logging
import FocusGateHarness
import Synchronization

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let recordCount = arguments.first ?? 100_000
let rounds = arguments.dropFirst().first ?? 3
let partitions = 16
let users = 100_000
/// Records before the measured ones: every user once, so that the gateway's cache holds their
/// contexts (steady state). The raw pass-through is measured over the same records.
let warmup = users
/// Earlier notifications per user, in the state changelog each `serve` run starts from. The
/// embedded broker keeps at most 5 MiB per partition, which bounds this (10: about 3 MB a partition).
let history = Int(ProcessInfo.processInfo.environment["BENCH_HISTORY"] ?? "") ?? 10
/// `BENCH_LONG_IDS=1`: user and notification ids shaped as UUIDs (36 bytes), as many producers
/// send them; by default short ones (`u-1`, `n-1`), which a String holds inline.
let longIDs = ProcessInfo.processInfo.environment["BENCH_LONG_IDS"] == "1"
/// User `index`'s id.
func userName(_ index: Int) -> String { longIDs ? uuid(0x75, index) : "u-\(index)" }
/// A notification id: `prefix` and `index` (`n-1`), or a UUID made of them.
func notificationName(_ prefix: Character, _ index: Int) -> String {
    longIDs ? uuid(prefix.asciiValue ?? 0, index) : "\(prefix)-\(index)"
}
/// A UUID-shaped id (version 4's layout) holding `kind` and `index`.
func uuid(_ kind: UInt8, _ index: Int) -> String {
    func hex(_ value: UInt64, _ digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
    return "\(hex(UInt64(kind), 8))-0000-4000-8000-\(hex(UInt64(bitPattern: Int64(index)) & 0xffff_ffff_ffff, 12))"
}
/// The commit interval of every run, the raw pass-through's included (`BENCH_COMMIT_MS`, 250 by default).
let commitInterval = Duration.milliseconds(Int(ProcessInfo.processInfo.environment["BENCH_COMMIT_MS"] ?? "") ?? 250)
let logger: Logger = {
    guard ProcessInfo.processInfo.environment["BENCH_TRACE"] != nil else {
        return Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
    }
    var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .debug
    return logger
}()
var rows: [(name: String, value: String, json: String)] = []

/// How often the gateway's progress is read from its `/metrics`. Each read costs both processes
/// CPU (an HTTP request, the whole exposition rendered and parsed), taken from the gateway on two
/// cores; each sample is timed, so a coarser interval loses no precision over seconds of input.
let progressInterval = Duration.milliseconds(Int(ProcessInfo.processInfo.environment["BENCH_POLL_MS"] ?? "") ?? 25)

func format(_ rate: Double) -> String { String(format: "%.0f", rate) }
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func log(_ line: String) { FileHandle.standardError.write(Data("\(line)\n".utf8)) }

/// Prints the rows as a markdown table titled `title`, then one JSON line per row.
@MainActor func printRows(title: String) {
    print("\n| \(title) | result |\n|---|---|")
    for row in rows { print("| \(row.name) | \(row.value) |") }
    for row in rows { print(row.json) }
}

/// Closes the store and the broker, prints the rows under `title` and ends the process.
@MainActor func finish(printing title: String) async -> Never {
    await store.close()
    broker.shutdown()
    printRows(title: title)
    exit(0)
}

// MARK: - Broker, store, workload

let broker = try EmbeddedKafkaBroker(topics: TopicNames().specifications(partitions: partitions), logger: logger)
// The store's file goes with the process's scratch directory at exit (`finish` ends with `exit`).
let path = ScratchDirectory.process.file("gateway-bench", extension: "sqlite")
let store = try await SQLiteContextStore.open(path: path, logger: logger)
let apps = ["com.example.chat", "com.example.mail", "com.example.calendar", "com.example.news", "com.example.shop"]
let criteria = ["work-account", "personal", "family", "team-a", "team-b", "alerts", "promo", ""]
// The embedded broker holds a fetch for the whole fetch.wait.max.ms when it has no data at the
// moment of the request (a real broker answers as soon as data arrives): keep the wait short, as
// `serve` does with the embedded broker. Same settings for the raw pipe and the gateway.
let kafkaProperties = [
    "heartbeat.interval.ms": "500", "topic.metadata.refresh.interval.ms": "1000", "fetch.wait.max.ms": "10",
]
let runs = Atomic(0)
func nextRun() -> Int { runs.add(1, ordering: .relaxed).newValue }

// `GatewayBenchmark transition`: a mass Focus transition end to end (Transition.swift), alone.
if CommandLine.arguments.dropFirst().first == "transition" {
    let row = try await massTransitionBenchmark()
    print("| gateway benchmark: mass transition | result |\n|---|---|\n| \(row.name) | \(row.value) |\n\(row.json)")
    await store.close()
    broker.shutdown()
    exit(0)
}

/// Half of the users have a Focus on, with filters on some apps, one app silenced, others delivered.
func benchmarkContext(ofUser index: Int) -> FocusContext? {
    guard index % 2 == 0 else { return nil }
    return FocusContext(
        userID: userName(index), version: 1, focus: index % 4 == 0 ? "Work" : "Personal",
        allowTimeSensitive: index % 3 != 0, otherApps: index % 5 == 0 ? .silence : .deliver,
        apps: [
            "com.example.chat": .init(
                filterPredicate: "SELF IN {'work-account', 'team-\(index % 2 == 0 ? "a" : "b")'}"),
            "com.example.mail": .init(filterPredicate: "SELF BEGINSWITH[c] 'work' OR SELF == 'alerts'"),
            "com.example.news": .init(silenced: true),
        ]
    )
}
try await store.bulkInsertForBenchmark((0..<users).compactMap(benchmarkContext(ofUser:)))

// `GatewayBenchmark restart`: a restarted instance draining a backlog, users with 1 and with 50
// earlier notifications (Restart.swift), alone.
if CommandLine.arguments.dropFirst().first == "restart" {
    rows.append(try await restartBacklogRow())
    await finish(printing: "gateway benchmark: a restarted instance's backlog")
}

// `GatewayBenchmark restore`: `serve` started on a large state (Restore.swift), alone.
if CommandLine.arguments.dropFirst().first == "restore" {
    rows.append(contentsOf: try await restoreRows())
    await finish(printing: "gateway benchmark: a large state restored through `serve`")
}

// `GatewayBenchmark latency RATE…`: latency at each offered rate (records/s), alone (Paced.swift).
if CommandLine.arguments.dropFirst().first == "latency" {
    let offered = CommandLine.arguments.dropFirst(2).compactMap { Double($0) }
    for rate in offered.isEmpty ? [1_000] : offered {
        rows.append(try await latencyRow(offered: rate, seconds: 10))
        if ProcessInfo.processInfo.environment["BENCH_EXACTLY_ONCE"] != nil {
            rows.append(try await commitLatencyRow(offered: rate, seconds: 10, label: "as given"))
        }
    }
    await finish(printing: "gateway benchmark: latency (\(partitions) partitions, \(users) users)")
}

// The embedded broker keeps the newest 5 MiB of each partition: an input larger than that loses
// its oldest records before they are read, and a run that waits for every record never ends.
// The users' keys are Zipf-distributed, so the busiest partition is what bounds the count. A
// record costs its key and value and about 12 bytes of lengths, deltas and attributes in a batch.
let recordOverhead = 12
let inputBytes = (0..<(warmup + recordCount)).reduce(into: [Int](repeating: 0, count: partitions)) { bytes, index in
    let record = event(index)
    bytes[Int(record.partition)] += record.key.count + record.value.count + recordOverhead
}
if let busiest = inputBytes.max(), busiest > EmbeddedKafkaBroker.partitionByteLimit {
    log(
        "GatewayBenchmark \(recordCount): the busiest input partition would hold \(busiest / 1024) KiB, more than the \(EmbeddedKafkaBroker.partitionByteLimit / 1024) KiB the embedded broker keeps of a partition; use fewer records"
    )
    exit(2)
}

let input = "bench-notifications"
try broker.createTopic(.init(name: input, partitions: partitions))
try produce(topic: input, range: 0..<(warmup + recordCount))
log(
    "preloaded \(warmup) warm-up and \(recordCount) measured records; \(historyRecords.reduce(0) { $0 + $1.count }) history records per run"
)

// MARK: - Raw pass-through

/// Consume → produce unchanged to the delivered topic; commits like the gateway. Returns records/s
/// from the first batch to the last.
///
/// With `producing` above 1, every input record is also produced again (to the badges topic) so
/// that as many records come out per record in as the gateway writes (outputs, badge updates,
/// state changelog): the cost of the gateway's output volume alone, without its logic.
func rawPassThrough(_ mode: GatewayConfiguration.DeliveryMode, producing: Double = 1) async throws -> Double {
    let group = "raw-\(nextRun())"
    return try await DedicatedThread.run(name: "raw") {
        var consumerConfiguration = KafkaConsumerConfiguration(
            bootstrapServers: broker.bootstrapServers, groupID: group)
        consumerConfiguration.properties = kafkaProperties
        consumerConfiguration.sessionTimeout = .seconds(6)
        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers)
        producerConfiguration.properties = kafkaProperties
        if mode == .exactlyOnce { producerConfiguration.transactionalID = group }
        var failed = 0
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger) {
            if $0.error != nil { failed += 1 }
        }
        if mode == .exactlyOnce { try producer.initTransactions(timeout: .seconds(30)) }
        let output = try producer.topic(TopicNames().delivered)
        let extraOutput = try producer.topic(TopicNames().badges)
        var extraDue = 0.0
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logger)
        try consumer.subscribe([input])
        var consumed = 0
        var start: ContinuousClock.Instant?
        var next: [Int32: Int64] = [:]
        var open = false
        var nextCommit = ContinuousClock.now + commitInterval
        func commit() throws {
            let offsets = next.map { KafkaTopicPartition(topic: input, partition: $0.key, offset: $0.value) }
            if mode == .exactlyOnce {
                guard open else { return }
                try producer.sendOffsetsToTransaction(
                    offsets, groupMetadata: try consumer.groupMetadata(), timeout: .seconds(30))
                try producer.commitTransaction(timeout: .seconds(30))
                open = false
                try consumer.commit(offsets)  // the embedded broker stores no transactional offsets
            } else {
                try producer.flush(timeout: .seconds(30))
                precondition(failed == 0)
                try consumer.commit(offsets)
            }
        }
        var first = 0
        while consumed < warmup + recordCount {
            try consumer.consumeBatch(maxRecords: 2048, timeout: .milliseconds(100)) { batch in
                guard !batch.isEmpty else { return }
                if mode == .exactlyOnce && !open {
                    try producer.beginTransaction()
                    open = true
                }
                for record in batch {
                    try producer.produce(topic: output, key: record.key, value: record.value)
                    extraDue += producing - 1
                    while extraDue >= 1 {
                        try producer.produce(topic: extraOutput, key: record.key, value: record.value)
                        extraDue -= 1
                    }
                    next[record.partition] = record.offset + 1
                }
                consumed += batch.count
                // The pipe has no cache to warm: measured over the whole input, which at its rate
                // is a fraction of a second, so that the clock's and scheduler's noise weighs less.
                if start == nil {
                    start = ContinuousClock.now
                    first = consumed
                }
            }
            producer.poll()
            if ContinuousClock.now >= nextCommit {
                try commit()
                nextCommit = ContinuousClock.now + commitInterval
            }
        }
        let elapsed = (ContinuousClock.now - start!) / .seconds(1)
        try commit()
        consumer.close()
        return Double(consumed - first) / elapsed
    }
}

// MARK: - Throughput: raw against gateway, alternating

var raw: [GatewayConfiguration.DeliveryMode: [Double]] = [:]
var gateway: [GatewayConfiguration.DeliveryMode: [Double]] = [:]
var amplification: [GatewayConfiguration.DeliveryMode: Double] = [:]
var perRecord: [GatewayConfiguration.DeliveryMode: [GatewayRun]] = [:]
var rawAmplified: [GatewayConfiguration.DeliveryMode: [Double]] = [:]
/// `BENCH_BASELINE`: the binary before a change, measured in the same rounds.
let baselineExecutable = ProcessInfo.processInfo.environment["BENCH_BASELINE"].map { URL(fileURLWithPath: $0) }
var baseline: [GatewayConfiguration.DeliveryMode: [GatewayRun]] = [:]
for round in 1...rounds {
    for mode in [GatewayConfiguration.DeliveryMode.atLeastOnce, .exactlyOnce] {
        raw[mode, default: []].append(try await rawPassThrough(mode))
        if let baselineExecutable {
            let before = try await gatewayRate(mode, executable: baselineExecutable)
            baseline[mode, default: []].append(before)
            log("round \(round) \(mode): baseline binary \(format(before.rate)) records/s")
        }
        let measured = try await gatewayRate(mode)
        gateway[mode, default: []].append(measured.rate)
        amplification[mode] = measured.producedPerConsumed
        perRecord[mode, default: []].append(measured)
        rawAmplified[mode, default: []].append(try await rawPassThrough(mode, producing: measured.producedPerConsumed))
        log(
            "round \(round) \(mode): raw \(format(raw[mode]!.last!)), raw producing as much as the gateway \(format(rawAmplified[mode]!.last!)), gateway \(format(gateway[mode]!.last!)) records/s"
        )
    }
}
// The goal, in both modes: the gateway at 0.35 of the raw pass-through producing as many records.
let ratioGoal = 0.35
for mode in [GatewayConfiguration.DeliveryMode.atLeastOnce, .exactlyOnce] {
    let rawRate = median(raw[mode]!)
    let gatewayRate = median(gateway[mode]!)
    let ratio = gatewayRate / rawRate
    rows.append(
        (
            "raw pass-through, \(mode)", "\(format(rawRate)) records/s",
            #"{"benchmark":"raw-pass-through","mode":"\#(mode)","records":\#(recordCount),"rounds":\#(rounds),"records_per_s":\#(format(rawRate)),"all":\#(raw[mode]!.map(format))}"#
        ))
    rows.append(
        (
            "gateway, \(mode)", "\(format(gatewayRate)) records/s",
            #"{"benchmark":"gateway","mode":"\#(mode)","records":\#(recordCount),"rounds":\#(rounds),"records_per_s":\#(format(gatewayRate)),"all":\#(gateway[mode]!.map(format))}"#
        ))
    rows.append(
        (
            "records produced per record consumed, gateway \(mode) (raw: 1)",
            String(format: "%.2f", amplification[mode] ?? 0),
            #"{"benchmark":"gateway-produced-per-consumed","mode":"\#(mode)","ratio":\#(String(format: "%.3f", amplification[mode] ?? 0))}"#
        ))
    let runs = perRecord[mode]!
    let cpu = median(runs.map(\.cpuMicrosPerRecord))
    let allocations = runs.compactMap(\.allocationsPerRecord)
    let changelog = median(runs.map(\.changelogBytesPerRecord))
    rows.append(
        (
            "gateway per record, \(mode): CPU of the serve process, heap allocations of its workers, changelog bytes",
            String(
                format: "%.1f µs, %@, %.1f B", cpu,
                allocations.isEmpty
                    ? "not counted (libMallocCounter.so not built)"
                    : String(format: "%.2f allocations", median(allocations)),
                changelog),
            #"{"benchmark":"gateway-per-record","mode":"\#(mode)","history":\#(history),"cpu_us":\#(String(format: "%.2f", cpu)),"allocations":\#(allocations.isEmpty ? "null" : String(format: "%.3f", median(allocations))),"changelog_bytes":\#(String(format: "%.1f", changelog))}"#
        ))
    let workerCPU = runs.compactMap(\.workerCPUMicrosPerRecord)
    let beforeWorkerCPU = (baseline[mode] ?? []).compactMap(\.workerCPUMicrosPerRecord)
    if !workerCPU.isEmpty {
        let compared = beforeWorkerCPU.isEmpty ? nil : median(workerCPU) / median(beforeWorkerCPU)
        rows.append(
            (
                "gateway per record, \(mode): CPU of the worker threads (the batch loops)\(compared == nil ? "" : ", and ÷ the baseline binary's")",
                String(format: "%.1f µs", median(workerCPU))
                    + (compared.map { String(format: ", %.3f (%.1f µs before)", $0, median(beforeWorkerCPU)) } ?? ""),
                #"{"benchmark":"gateway-worker-cpu","mode":"\#(mode)","worker_cpu_us":\#(String(format: "%.2f", median(workerCPU))),"baseline_worker_cpu_us":\#(beforeWorkerCPU.isEmpty ? "null" : String(format: "%.2f", median(beforeWorkerCPU)))}"#
            ))
    }
    let amplifiedRate = median(rawAmplified[mode]!)
    rows.append(
        (
            "raw pass-through producing as many records as the gateway, \(mode)",
            "\(format(amplifiedRate)) records/s (\(String(format: "%.3f", amplifiedRate / rawRate)) of raw)",
            #"{"benchmark":"raw-pass-through-amplified","mode":"\#(mode)","produced_per_consumed":\#(String(format: "%.3f", amplification[mode] ?? 0)),"records_per_s":\#(format(amplifiedRate)),"ratio_to_raw":\#(String(format: "%.4f", amplifiedRate / rawRate))}"#
        ))
    rows.append(
        (
            "gateway / raw producing as much, \(mode) (goal ≥ \(ratioGoal))",
            String(format: "%.3f", gatewayRate / amplifiedRate),
            #"{"benchmark":"gateway-ratio-to-amplified","mode":"\#(mode)","ratio":\#(String(format: "%.4f", gatewayRate / amplifiedRate)),"goal":\#(ratioGoal)}"#
        ))
    rows.append(
        (
            "gateway / raw, \(mode)", String(format: "%.3f", ratio),
            #"{"benchmark":"gateway-ratio","mode":"\#(mode)","ratio":\#(String(format: "%.4f", ratio))}"#
        ))
    if let before = baseline[mode] {
        let beforeRate = median(before.map(\.rate))
        let beforeCPU = median(before.map(\.cpuMicrosPerRecord))
        let beforeChangelog = median(before.map(\.changelogBytesPerRecord))
        let beforeAllocations = before.compactMap(\.allocationsPerRecord)
        let allocationRatio =
            beforeAllocations.isEmpty || allocations.isEmpty ? nil : median(allocations) / median(beforeAllocations)
        rows.append(
            (
                "gateway ÷ the baseline binary, \(mode): rate, CPU per record, allocations per record, changelog bytes per record",
                String(
                    format: "%.3f (%@ records/s before), %.3f (%.1f µs before), %@, %.3f (%.1f B before)",
                    gatewayRate / beforeRate, format(beforeRate), cpu / beforeCPU, beforeCPU,
                    allocationRatio.map { String(format: "%.3f (%.2f before)", $0, median(beforeAllocations)) }
                        ?? "not counted", changelog / beforeChangelog, beforeChangelog),
                #"{"benchmark":"gateway-ratio-to-baseline","mode":"\#(mode)","rate_ratio":\#(String(format: "%.4f", gatewayRate / beforeRate)),"cpu_ratio":\#(String(format: "%.4f", cpu / beforeCPU)),"allocations_ratio":\#(allocationRatio.map { String(format: "%.4f", $0) } ?? "null"),"changelog_ratio":\#(String(format: "%.4f", changelog / beforeChangelog)),"baseline_records_per_s":\#(format(beforeRate)),"baseline_cpu_us":\#(String(format: "%.2f", beforeCPU)),"baseline_changelog_bytes":\#(String(format: "%.1f", beforeChangelog))}"#
            ))
    }
}

let throughputTitle =
    "gateway benchmark (\(recordCount) records, \(partitions) partitions, \(users) users, median of \(rounds) rounds)"
if ProcessInfo.processInfo.environment["BENCH_SKIP_SCALE"] != nil {
    await finish(printing: throughputTitle)
}

// MARK: - Scale: fresh input, instances assigned first, then the records arrive

func scaleRate(instances count: Int, workers: Int) async throws -> Double {
    let topic = "bench-scale-\(nextRun())"
    try broker.createTopic(.init(name: topic, partitions: partitions))
    let shared = try settings(.atLeastOnce, input: topic, workers: workers)
    var instances: [Instance] = []
    for _ in 0..<count { instances.append(try await Instance(shared)) }
    func consumed() async -> Int {
        var total = 0
        for instance in instances { total += await instance.consumed }
        return total
    }
    // Wait for a settled assignment: every partition owned, every instance with some, for 2 s.
    var stableSince = ContinuousClock.now
    while ContinuousClock.now - stableSince < .seconds(2) {
        var owned: [Int] = []
        for instance in instances { owned.append(Int(await instance.metric("focusgate_assigned_partitions"))) }
        if owned.reduce(0, +) != partitions || owned.contains(0) { stableSince = ContinuousClock.now }
        try await Task.sleep(for: .milliseconds(50))
    }
    // Every user once, so that their contexts are cached; then the measured records arrive.
    try await DedicatedThread.run(name: "producer") { try produce(topic: topic, range: 0..<warmup) }
    while await consumed() < warmup { try await Task.sleep(for: progressInterval) }
    let producing = Task {
        try await DedicatedThread.run(name: "producer") {
            try produce(topic: topic, range: warmup..<(warmup + recordCount))
        }
    }
    var total = await consumed()
    while total == warmup {
        try await Task.sleep(for: .milliseconds(1))
        total = await consumed()
    }
    let start = ContinuousClock.now
    let first = total
    var end = start
    while total < warmup + recordCount {
        try await Task.sleep(for: progressInterval)
        total = await consumed()
        end = ContinuousClock.now
    }
    let rate = Double(total - first) / ((end - start) / .seconds(1))
    try await producing.value
    for instance in instances { await instance.stop() }
    return rate
}

let oneWorker = try await scaleRate(instances: 1, workers: 1)
let twoWorkers = try await scaleRate(instances: 1, workers: 2)
let twoInstances = try await scaleRate(instances: 2, workers: 1)
log("scale: 1 worker \(format(oneWorker)), 2 workers \(format(twoWorkers)), 2 instances \(format(twoInstances))")
rows.append(
    (
        "scale: 1 instance × 1 worker (records produced while consumed)", "\(format(oneWorker)) records/s",
        #"{"benchmark":"scale","instances":1,"workers":1,"records_per_s":\#(format(oneWorker))}"#
    ))
rows.append(
    (
        "scale: 1 instance × 2 workers",
        String(format: "%@ records/s (× %.2f)", format(twoWorkers), twoWorkers / oneWorker),
        #"{"benchmark":"scale","instances":1,"workers":2,"records_per_s":\#(format(twoWorkers)),"ratio":\#(String(format: "%.3f", twoWorkers / oneWorker))}"#
    ))
rows.append(
    (
        "scale: 2 instances × 1 worker",
        String(format: "%@ records/s (× %.2f)", format(twoInstances), twoInstances / oneWorker),
        #"{"benchmark":"scale","instances":2,"workers":1,"records_per_s":\#(format(twoInstances)),"ratio":\#(String(format: "%.3f", twoInstances / oneWorker))}"#
    ))

// MARK: - Latency at half the measured maximum (at-least-once: outputs are readable once delivered)

for (offered, seconds, label) in [
    (median(gateway[.atLeastOnce]!) / 2, 10.0, "half the measured maximum"), (1000.0, 5.0, "a light load"),
] {
    rows.append(try await latencyRow(offered: offered, seconds: seconds, label: label))
}
// Exactly-once: outputs are readable once their transaction commits (the gateway's histogram).
rows.append(
    try await commitLatencyRow(
        offered: median(gateway[.exactlyOnce]!) / 2, seconds: 10, label: "half the measured maximum"))

await finish(printing: throughputTitle)
