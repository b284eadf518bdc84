import BenchmarkSupport
import FocusGate
import FocusGateCore
import FocusGateKafka
import Foundation

// MARK: - A large state restored through `serve` (`GatewayBenchmark restore`)

/// Users of the restore benchmark, each with 10 remembered ids, half of them unread.
let restoreUsers = Int(ProcessInfo.processInfo.environment["BENCH_RESTORE_USERS"] ?? "") ?? 1_000_000
/// Its partitions: the embedded broker keeps at most 5 MiB a partition, and 1,000,000 users'
/// changelog is about 0.8 GB.
let restorePartitions = Int(ProcessInfo.processInfo.environment["BENCH_RESTORE_PARTITIONS"] ?? "") ?? 256

/// One notification per partition, for its first user, waiting in the input before `serve` starts.
func restoreProbes(topic: String) throws {
    try produceAll("probe records") { producer, poll in
        for partition in 0..<restorePartitions {
            let value =
                #"{"id":"probe","userId":"u-\#(partition)","appId":"\#(apps[0])","filterCriteria":"\#(criteria[0])"}"#
            try producer.produce(
                topic: topic, partition: Int32(partition), key: Array("u-\(partition)".utf8), value: Array(value.utf8))
            poll(partition + 1)
        }
    }
}

/// What one instance's start showed: when its first output and its last probe's came, when it
/// was ready (every partition restored), and its resident bytes then and at most.
struct RestoreRun {
    var firstOutput: Double
    var allProbes: Double
    var ready: Double
    var resident: Int
    var peakResident: Int
    /// Share of a core the process used over 3 s once ready with nothing to do.
    var idleCPU: Double
}

/// Starts `serve` on `state` (at-least-once, one worker) and watches it until every probe is
/// decided and it is ready.
func restoreStart(input: String, state: String) async throws -> RestoreRun {
    let environment = try settings(.atLeastOnce, input: input, state: state)
    let started = ContinuousClock.now
    func since() -> Double { (ContinuousClock.now - started) / .seconds(1) }
    let instance = try await Instance(environment, waitingUntilReady: false)
    var firstOutput: Double?
    var allProbes: Double?
    var ready: Double?
    while allProbes == nil || ready == nil {
        try await Task.sleep(for: .milliseconds(10))
        let decided = await instance.metric("focusgate_decisions_total")
        if firstOutput == nil && decided > 0 { firstOutput = since() }
        if allProbes == nil && decided >= Double(restorePartitions) { allProbes = since() }
        if ready == nil, firstOutput != nil, try await instance.serve.waitUntilReady(timeout: .milliseconds(1)) {
            ready = since()
        }
        guard since() < 900 else { fatalError("serve did not restore within 900 s") }
    }
    let resident = instance.serve.residentBytes ?? 0
    let peakResident = instance.serve.peakResidentBytes ?? 0
    let idleFrom = (cpu: instance.cpuSeconds, at: ContinuousClock.now)
    try await Task.sleep(for: .seconds(3))  // a measurement span, not a wait for a condition
    let idleCPU = (instance.cpuSeconds - idleFrom.cpu) / ((ContinuousClock.now - idleFrom.at) / .seconds(1))
    let run = RestoreRun(
        firstOutput: firstOutput!, allProbes: allProbes!, ready: ready!, resident: resident,
        peakResident: peakResident, idleCPU: idleCPU)
    await instance.stop()
    return run
}

/// `GatewayBenchmark restore`: `serve` started on a changelog of `restoreUsers` users with 10
/// remembered ids each (half unread), with one notification waiting in each input partition:
/// the time to its first output, to every partition's, and to readiness; its peak resident bytes
/// against the state's own size (its resident bytes restored less those of the same start on an
/// empty changelog).
func restoreRows() async throws -> [(name: String, value: String, json: String)] {
    let run = nextRun()
    let input = "bench-restore-\(run)"
    let state = "bench-restore-state-\(run)"
    let empty = "bench-restore-empty-\(run)"
    try broker.createTopic(.init(name: input, partitions: restorePartitions))
    try broker.createTopic(.compacted(state, partitions: restorePartitions))
    try broker.createTopic(.compacted(empty, partitions: restorePartitions))
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    let writing = ContinuousClock.now
    let written = try preloadHistory(topic: state, partitions: restorePartitions) {
        historyChangelog(users: stride(from: $0, to: restoreUsers, by: restorePartitions), history: 10, now: now)
    }
    log("restore: \(written) state records of \(restoreUsers) users written in \(ContinuousClock.now - writing)")
    try restoreProbes(topic: input)
    let bare = try await restoreStart(input: input, state: empty)
    log("restore: empty changelog \(bare)")
    let full = try await restoreStart(input: input, state: state)
    log("restore: \(restoreUsers) users \(full)")
    let stateBytes = Double(full.resident - bare.resident)
    let megabytes = { (bytes: Int) in String(format: "%.0f MB", Double(bytes) / 1e6) }
    return [
        (
            "its CPU once ready with nothing to do, share of a core: \(restoreUsers) users; an empty changelog",
            String(format: "%.3f; %.3f", full.idleCPU, bare.idleCPU),
            #"{"benchmark":"gateway-restore-idle-cpu","cores":\#(String(format: "%.4f", full.idleCPU)),"empty_cores":\#(String(format: "%.4f", bare.idleCPU))}"#
        ),
        (
            "`serve` started on \(restoreUsers) users' state (\(written) changelog records, \(restorePartitions) partitions, 10 ids a user, half unread): first output; every partition's; ready (s)",
            String(format: "%.2f; %.2f; %.2f s", full.firstOutput, full.allProbes, full.ready),
            #"{"benchmark":"gateway-restore","users":\#(restoreUsers),"records":\#(written),"partitions":\#(restorePartitions),"first_output_s":\#(String(format: "%.3f", full.firstOutput)),"all_partitions_s":\#(String(format: "%.3f", full.allProbes)),"ready_s":\#(String(format: "%.3f", full.ready))}"#
        ),
        (
            "its resident bytes: peak; restored; on an empty changelog; the state's own (restored − empty); peak ÷ state",
            "\(megabytes(full.peakResident)); \(megabytes(full.resident)); \(megabytes(bare.resident)); \(megabytes(Int(stateBytes))); "
                + String(format: "%.2f", Double(full.peakResident) / stateBytes),
            #"{"benchmark":"gateway-restore-memory","peak_bytes":\#(full.peakResident),"resident_bytes":\#(full.resident),"empty_resident_bytes":\#(bare.resident),"empty_peak_bytes":\#(bare.peakResident),"state_bytes":\#(Int(stateBytes)),"peak_over_state":\#(String(format: "%.3f", Double(full.peakResident) / stateBytes))}"#
        ),
    ]
}
