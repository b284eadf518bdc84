// Steady load through `focusgate serve` (a child process) on the embedded broker for a fixed
// time, sampling the process's resident memory, consumer lag and throughput; fails unless memory
// levels off and lag stays bounded. Prints a markdown table and one JSON line per sample.
//
//   make soak                      (SOAK_SECONDS=600, SOAK_RATE=5000 records/s)
//
// Per-user state is bounded by design (the dedupe window and the unread list per app), so a run
// shorter than the time to reach those bounds would show growth that is not a leak. The soak uses
// small bounds (64 ids, 32 unread) and 10,000 users, reached in about two minutes at the default
// rate; memory that still grows after that is a leak.
import FocusGate
import FocusGateCore
import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateStore
import FocusGateHarness
import FocusGateThreads
import Foundation
import Logging
import Synchronization

let environment = ProcessInfo.processInfo.environment
let seconds = Int(environment["SOAK_SECONDS"] ?? "") ?? 600
let rate = Int(environment["SOAK_RATE"] ?? "") ?? 5000
let users = 10_000
let partitions = 8
let samples = 20
let sampleInterval = Duration.seconds(max(5, seconds / samples))
let logger = Logger(label: "soak") { _ in SwiftLogNoOpLogHandler() }
func log(_ line: String) { FileHandle.standardError.write(Data("\(line)\n".utf8)) }

// MARK: - Broker, store, gateway

let broker = try EmbeddedKafkaBroker(topics: TopicNames().specifications(partitions: partitions), logger: logger)
// Not the process's scratch directory: a failed soak keeps this one, with serve's log, to be read.
let directory = NSTemporaryDirectory() + "focusgate-soak-\(UUID().uuidString)"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
let databasePath = directory + "/focusgate.sqlite"
let apps = ["com.example.chat", "com.example.mail", "com.example.news"]
let criteria = ["work-account", "personal", "team-a", "alerts", ""]

@Sendable func context(user: Int, version: Int64) -> FocusContext {
    FocusContext(
        userID: "u-\(user)", version: version, focus: version % 2 == 1 ? "Work" : "Personal",
        apps: [
            "com.example.chat": .init(filterPredicate: "SELF IN {'work-account', 'team-a'}"),
            "com.example.news": .init(silenced: version % 3 == 0),
        ])
}
do {
    let store = try await SQLiteContextStore.open(path: databasePath, logger: logger)
    try await store.bulkInsertForBenchmark((0..<users).filter { $0 % 2 == 0 }.map { context(user: $0, version: 1) })
    await store.close()
}

let logPath = directory + "/serve.log"
let serve = try await ServeProcess(
    executable: ServeProcess.siblingExecutable, bootstrapServers: broker.bootstrapServers, databasePath: databasePath,
    environment: [
        "FOCUSGATE_DELIVERY_COMMITGROUPOFFSETS": "true",
        "FOCUSGATE_DEDUPE_WINDOWPERUSER": "64",
        "FOCUSGATE_BADGES_MAXUNREADPERAPP": "32",
        "FOCUSGATE_KAFKA_PROPERTIES_FETCH_WAIT_MAX_MS": "10",
    ],
    logPath: logPath)
guard try await serve.waitUntilReady(timeout: .seconds(60)) else {
    log("focusgate serve did not become ready; its log: \(logPath)")
    exit(1)
}
log(
    "soak: \(seconds) s at \(rate) records/s, \(users) users, serve pid \(serve.processIdentifier), log \(logPath)"
)

// MARK: - Load

/// 1% bad records, 3% reads, 5% clears, the rest notifications (APNs-shaped and plain).
@Sendable func event(_ index: Int) -> (key: [UInt8], value: [UInt8]) {
    let user = "u-\((index &* 7919) % users)"
    let app = apps[index % apps.count]
    let json: String
    switch index % 100 {
    case 42: json = #"{"id":"n-\#(index)","userId":"\#(user)","#
    case 43, 44, 45:
        json =
            #"{"type":"read","id":"r-\#(index)","userId":"\#(user)","appId":"\#(app)","notificationIds":["n-\#(index - 30_000)"]}"#
    case 46...50: json = #"{"type":"clear","id":"c-\#(index)","userId":"\#(user)","appId":"\#(app)"}"#
    default:
        json =
            index % 2 == 0
            ? #"{"id":"n-\#(index)","userId":"\#(user)","appId":"\#(app)","aps":{"alert":{"title":"New message","body":"Lunch at noon?"},"filter-criteria":"\#(criteria[index % criteria.count])"}}"#
            : #"{"id":"n-\#(index)","userId":"\#(user)","appId":"\#(app)","filterCriteria":"\#(criteria[index % criteria.count])","payload":{"thread":"t-\#(index % 50)"}}"#
    }
    return (Array(user.utf8), Array(json.utf8))
}

let produced = Atomic(0)
let failedDeliveries = Atomic(0)
let stopLoad = Atomic(false)
let topics = TopicNames()
/// Offers `rate` records a second in 10 ms steps, and an inline context change every 1,000 records.
let load = Task {
    try await DedicatedThread.run(name: "soak-load") {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers), logger: logger,
            onDeliveryReport: { if $0.error != nil { failedDeliveries.add(1, ordering: .relaxed) } })
        let start = ContinuousClock.now
        var index = 0
        var version: Int64 = 1
        while !stopLoad.load(ordering: .relaxed) {
            let due = Int(Double(rate) * (ContinuousClock.now - start).seconds)
            while index < due {
                let record = event(index)
                try producer.produce(topic: topics.notifications, key: record.key, value: record.value)
                if index % 1000 == 0 {
                    version += 1
                    let changed = context(user: (index / 1000 &* 104_729) % users, version: version)
                    try producer.produce(
                        topic: topics.invalidations, key: Array(changed.userID.utf8),
                        value: ContextInvalidation.inlineValue(for: changed))
                }
                index += 1
            }
            produced.store(index, ordering: .relaxed)
            producer.poll()
            Thread.sleep(forTimeInterval: 0.01)
        }
        try producer.flush(timeout: .seconds(60))
    }
}

extension Duration {
    var seconds: Double { Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18 }
}

// MARK: - Samples

struct Sample {
    var elapsed: Double
    var produced: Int
    var consumed: Double
    var lag: Double
    var residentBytes: Int
    var cacheEntries: Double
}
var taken: [Sample] = []
let start = ContinuousClock.now
print("| elapsed s | produced | consumed | lag | resident MiB | cached contexts |")
print("|---:|---:|---:|---:|---:|---:|")
while ContinuousClock.now - start < .seconds(seconds) {
    try await Task.sleep(for: sampleInterval)
    let metrics = await serve.metrics()
    let sample = Sample(
        elapsed: (ContinuousClock.now - start).seconds, produced: produced.load(ordering: .relaxed),
        consumed: metrics["focusgate_events_consumed_total"] ?? 0,
        lag: metrics.filter { $0.key.hasPrefix("focusgate_consumer_lag{") }.values.reduce(0, +),
        residentBytes: serve.residentBytes ?? 0, cacheEntries: metrics["focusgate_context_cache_entries"] ?? 0)
    taken.append(sample)
    let mebibytes = Double(sample.residentBytes) / 1_048_576
    print(
        "| \(Int(sample.elapsed)) | \(sample.produced) | \(Int(sample.consumed)) | \(Int(sample.lag)) | \(String(format: "%.1f", mebibytes)) | \(Int(sample.cacheEntries)) |"
    )
    log(
        #"{"soak":"sample","elapsedSeconds":\#(Int(sample.elapsed)),"produced":\#(sample.produced),"consumed":\#(Int(sample.consumed)),"lag":\#(Int(sample.lag)),"residentBytes":\#(sample.residentBytes)}"#
    )
    guard serve.isRunning else { break }
}
stopLoad.store(true, ordering: .relaxed)
try await load.value

// MARK: - Verdict

let alive = serve.isRunning
let exitStatus = await serve.stop(SIGTERM)
let half = taken.filter { $0.elapsed >= Double(seconds) / 2 }
let middle = half.first?.residentBytes ?? 0
let end = taken.last?.residentBytes ?? 0
let growth = middle > 0 ? Double(end - middle) / Double(middle) : .infinity
let peakLag = half.map(\.lag).max() ?? .infinity
let memoryLevels = growth <= 0.10
let lagBounded = peakLag <= Double(rate) * 2
print("")
print(
    "resident memory: \(String(format: "%.1f", Double(middle) / 1_048_576)) MiB at half time, \(String(format: "%.1f", Double(end) / 1_048_576)) MiB at the end (\(String(format: "%+.1f", growth * 100))%; levels off when within 10%)"
)
print("peak lag in the second half: \(Int(peakLag)) records (bounded when under 2 s of input, \(rate * 2))")
print("serve: \(alive ? "up for the whole run" : "DIED"), exit status after SIGTERM \(exitStatus)")
log(
    #"{"soak":"verdict","seconds":\#(seconds),"rate":\#(rate),"residentGrowth":\#(growth),"peakLag":\#(peakLag),"memoryLevelsOff":\#(memoryLevels),"lagBounded":\#(lagBounded),"exitStatus":\#(exitStatus)}"#
)
broker.shutdown()
guard alive && exitStatus == 0 && memoryLevels && lagBounded else {
    print("soak FAILED (serve log: \(logPath))")
    exit(1)
}
try? FileManager.default.removeItem(atPath: directory)
print("soak passed")
