import BenchmarkSupport
import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateThreads
import Foundation

// MARK: - A restarted instance's backlog (`GatewayBenchmark restart`)

/// Users of the restart benchmark: its history must fit the embedded broker's 5 MiB a partition
/// at 50 earlier notifications a user.
let restartUsers = Int(ProcessInfo.processInfo.environment["BENCH_RESTART_USERS"] ?? "") ?? 20_000

/// The state changelog of `restartUsers` users with `history` earlier notifications each (over
/// the apps, every second one read), decided under the context each user has in the store, as
/// the instance before the restart left it.
func restartHistory(_ history: Int) -> [[(key: [UInt8], value: [UInt8]?)]] {
    var compiler = FocusContextCompiler()
    let now: Int64 = Int64(Date().timeIntervalSince1970 * 1000)
    return (0..<partitions).map { partition in
        historyChangelog(users: stride(from: partition, to: restartUsers, by: partitions), history: history, now: now) {
            benchmarkContext(ofUser: $0).map { try! compiler.compile($0) }
        }
    }
}

/// The backlog: 3 notifications a user, each user's in their partition, every app in turn.
func restartBacklog(topic: String) throws -> Int {
    var count = 0
    try produceAll("backlog records") { producer, poll in
        for round in 0..<3 {
            for user in 0..<restartUsers {
                let app = apps[(user + round) % apps.count]
                let value =
                    #"{"id":"b-\#(round)","userId":"u-\#(user)","appId":"\#(app)","filterCriteria":"\#(criteria[(user + round) % criteria.count])"}"#
                try producer.produce(
                    topic: topic, partition: partition(ofUser: user), key: Array("u-\(user)".utf8),
                    value: Array(value.utf8))
                count += 1
                poll(count)
            }
        }
    }
    return count
}

/// One restart: `serve` restores `history`, then the backlog arrives (produced at several times
/// the gateway's rate); the rate from its first record consumed to its last, and the CPU per
/// record over that span. The backlog waits for every partition to be restored: with restores
/// beside the loop, a partition restored early would drain its share while others restore.
func restartDrain(history: [[(key: [UInt8], value: [UInt8]?)]]) async throws -> (rate: Double, cpuMicros: Double) {
    let topic = "bench-restart-\(nextRun())"
    try broker.createTopic(.init(name: topic, partitions: partitions))
    let instance = try await Instance(try settings(.atLeastOnce, input: topic, history: history))
    while await instance.metric("focusgate_assigned_partitions") < Double(partitions) {
        try await Task.sleep(for: .milliseconds(5))
    }
    let producing = Task { try await DedicatedThread.run(name: "producer") { try restartBacklog(topic: topic) } }
    var (consumed, at) = await instance.progress()
    while consumed == 0 {
        try await Task.sleep(for: .milliseconds(5))
        (consumed, at) = await instance.progress()
    }
    let start = at
    let first = consumed
    let cpuBefore = instance.cpuSeconds
    let total = try await producing.value
    while consumed < total {
        try await Task.sleep(for: .milliseconds(5))
        (consumed, at) = await instance.progress()
    }
    let cpu = instance.cpuSeconds - cpuBefore
    await instance.stop()
    let records = Double(consumed - first)
    return (records / ((at - start) / .seconds(1)), cpu / records * 1e6)
}

/// ``restartDrain(history:)`` with 1 and with 50 earlier notifications a user, in alternating
/// rounds (`BENCH_ROUNDS`, 3): the median ratio of the rates.
func restartBacklogRow() async throws -> (name: String, value: String, json: String) {
    let rounds = Int(ProcessInfo.processInfo.environment["BENCH_ROUNDS"] ?? "") ?? 3
    let histories = [1: restartHistory(1), 50: restartHistory(50)]
    var runs: [Int: [(rate: Double, cpuMicros: Double)]] = [:]
    for round in 0..<rounds {
        for history in round % 2 == 0 ? [1, 50] : [50, 1] {
            let run = try await restartDrain(history: histories[history]!)
            log(
                "restart round \(round), \(history) earlier: \(Int(run.rate)) records/s, \(run.cpuMicros) µs CPU a record"
            )
            runs[history, default: []].append(run)
        }
    }
    let ratios = zip(runs[1]!, runs[50]!).map { $1.rate / $0.rate }.sorted()
    let median = ratios[ratios.count / 2]
    func medianOf(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let few = (rate: medianOf(runs[1]!.map(\.rate)), cpu: medianOf(runs[1]!.map(\.cpuMicros)))
    let many = (rate: medianOf(runs[50]!.map(\.rate)), cpu: medianOf(runs[50]!.map(\.cpuMicros)))
    return (
        "a restarted `serve` draining 3 notifications a user (\(restartUsers) users, at-least-once): rate with 50 earlier notifications ÷ with 1 (median of \(rounds) alternating rounds, range); records/s and CPU µs a record, 1 / 50",
        String(
            format: "%.2f (%.2f–%.2f); %.0f / %.0f records/s; %.1f / %.1f µs", median, ratios.first!, ratios.last!,
            few.rate, many.rate, few.cpu, many.cpu),
        #"{"benchmark":"gateway-restart-backlog","ratio":\#(String(format: "%.3f", median)),"rate_1":\#(Int(few.rate)),"rate_50":\#(Int(many.rate)),"cpu_us_1":\#(String(format: "%.2f", few.cpu)),"cpu_us_50":\#(String(format: "%.2f", many.cpu))}"#
    )
}
