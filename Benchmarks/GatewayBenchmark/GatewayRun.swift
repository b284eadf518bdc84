import FocusGate
import FocusGateKafka
import FocusGateThreads
import Foundation

// MARK: - One gateway run: `focusgate serve` over an input of its own

/// What a gateway run measured over the records after the warm-up.
struct GatewayRun {
    var rate: Double
    var producedPerConsumed: Double
    var cpuMicrosPerRecord: Double
    /// The worker threads' CPU per record; `nil` when no thread is named as a worker.
    var workerCPUMicrosPerRecord: Double?
    var allocationsPerRecord: Double?
    var changelogBytesPerRecord: Double
}

/// Runs `focusgate serve` over an input of its own: it restores the users' history and takes the
/// `warmup` records, which put every user's context in its cache (steady state); once every
/// partition is in use and warm, the measured records arrive (produced at several times the
/// gateway's rate, so it works from a backlog). Measured from the first of them taken: a partition
/// restored early would otherwise drain its share while others still restore, and the
/// measurement would include the restore.
func gatewayRate(_ mode: GatewayConfiguration.DeliveryMode, executable: URL = servedExecutable)
    async throws -> GatewayRun
{
    let topic = "bench-gateway-\(nextRun())"
    try broker.createTopic(.init(name: topic, partitions: partitions))
    try produce(topic: topic, range: 0..<warmup)
    let instance = try await Instance(try settings(mode, input: topic), executable: executable)
    while true {
        let assigned = await instance.metric("focusgate_assigned_partitions")
        if assigned >= Double(partitions), await instance.consumed >= warmup { break }
        try await Task.sleep(for: progressInterval)
    }
    try runWarmHook(pid: instance.serve.processIdentifier)
    let producing = Task {
        try await DedicatedThread.run(name: "producer") {
            try produce(topic: topic, range: warmup..<(warmup + recordCount))
        }
    }
    var (consumed, at) = await instance.progress()
    while consumed <= warmup {
        try await Task.sleep(for: progressInterval)
        (consumed, at) = await instance.progress()
    }
    let start = at
    let first = consumed
    let before = await instance.reading()
    var trace: [String] = []
    var lastTrace = ContinuousClock.now
    while consumed < warmup + recordCount {
        try await Task.sleep(for: progressInterval)
        (consumed, at) = await instance.progress()
        if ProcessInfo.processInfo.environment["BENCH_TRACE"] != nil,
            ContinuousClock.now - lastTrace > .milliseconds(100)
        {
            lastTrace = ContinuousClock.now
            trace.append("\(consumed)")
        }
    }
    try await producing.value
    let elapsed = (at - start) / .seconds(1)
    let after = await instance.reading()
    if !trace.isEmpty {
        log("progress every 100 ms: \(trace.joined(separator: " "))")
        log(
            "cache hits \(await instance.metric("focusgate_context_cache_hits_total")) misses \(await instance.metric("focusgate_context_cache_misses_total")) load seconds \(await instance.metric("focusgate_context_load_seconds_sum"))"
        )
    }
    let cost = CostPerRecord(from: before, to: after)
    let run = GatewayRun(
        rate: Double(consumed - first) / elapsed, producedPerConsumed: await instance.producedPerConsumed,
        cpuMicrosPerRecord: cost.cpuMicroseconds,
        workerCPUMicrosPerRecord: after.workerCPUSeconds > 0 ? cost.workerCPUMicroseconds : nil,
        allocationsPerRecord: await instance.metric("focusgate_worker_allocations_total") > 0 ? cost.allocations : nil,
        changelogBytesPerRecord: cost.changelogBytes)
    await instance.stop()
    return run
}

/// `BENCH_WARM=COMMAND`: run once the gateway is warm, before the measured records, with the
/// `serve` process's id as its last argument, and waited for. With `serve` under callgrind
/// (`BENCH_SERVE`), `BENCH_WARM='callgrind_control --zero'` leaves out the warm-up's instructions
/// (every user's first record a cache miss), so that the counts are the steady state's.
func runWarmHook(pid: Int32) throws {
    guard let command = ProcessInfo.processInfo.environment["BENCH_WARM"], !command.isEmpty else { return }
    let hook = Process()
    hook.executableURL = URL(fileURLWithPath: "/bin/sh")
    hook.arguments = ["-c", "\(command) \(pid)"]
    try hook.run()
    hook.waitUntilExit()
    guard hook.terminationStatus == 0 else {
        fatalError("BENCH_WARM exited with \(hook.terminationStatus): \(command)")
    }
}
