// Context plane figures: invalidation-to-effect latency through the real admin API, embedded
// broker and listener; cache throughput over a store of 1,000,000 contexts; CLOCK's hit ratio.
//
//   swift run -c release ContextBenchmark [users]
import BenchmarkSupport
import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateStore
import Foundation
import Hummingbird
import Logging
import Prometheus
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let users = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000
let logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
var rows: [(String, String, String)] = []

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

// MARK: - A store of 1,000,000 contexts

let path = ScratchDirectory.process.file("context-bench", extension: "sqlite")
let store = try await SQLiteContextStore.open(path: path, logger: logger)
let loadStart = ContinuousClock.now
try await store.bulkInsertForBenchmark(
    (0..<users).map { index in
        FocusContext(
            userID: "user-\(index)", version: 1, focus: index % 2 == 0 ? "Work" : nil,
            apps: ["com.example.chat": .init(filterPredicate: "SELF IN {'work-account-\(index % 100)'}")]
        )
    })
let loadSeconds = (ContinuousClock.now - loadStart) / .seconds(1)
rows.append(
    (
        "store filled", String(format: "%d contexts in %.1f s", users, loadSeconds),
        #"{"benchmark":"store-fill","contexts":\#(users),"seconds":\#(String(format: "%.1f", loadSeconds))}"#
    ))

// MARK: - Cache throughput: misses (one store query per 500-user batch) and hits

let registry = PrometheusCollectorRegistry()
var cacheConfiguration = ContextCache.Configuration()
cacheConfiguration.maxEntries = users
let cache = ContextCache(
    store: store, configuration: cacheConfiguration, metrics: ContextCacheMetrics(registry: registry), logger: logger)
let batches = stride(from: 0, to: min(users, 200_000), by: 500).map { start in
    (start..<min(start + 500, users)).map { "user-\($0)" }
}
var start = ContinuousClock.now
for batch in batches { _ = cache.resolve(batch) }
var seconds = (ContinuousClock.now - start) / .seconds(1)
let missRate = Double(batches.count * 500) / seconds
rows.append(
    (
        "cache misses, 500-user batches (one store query each)", String(format: "%.0f users/s", missRate),
        #"{"benchmark":"cache-miss","users_per_s":\#(Int(missRate))}"#
    ))
start = ContinuousClock.now
for _ in 0..<5 { for batch in batches { _ = cache.resolve(batch) } }
seconds = (ContinuousClock.now - start) / .seconds(1)
let hitRate = Double(batches.count * 500 * 5) / seconds
rows.append(
    (
        "cache hits, 500-user batches (one lock per batch)", String(format: "%.2f M users/s", hitRate / 1e6),
        #"{"benchmark":"cache-hit","users_per_s":\#(Int(hitRate))}"#
    ))

// MARK: - CLOCK under a skewed workload

// Zipf(s = 1) over all users by inverse transform on the harmonic CDF (approximated with logs).
var random = SplitMix(state: 42)
let harmonic = log(Double(users)) + 0.5772
@MainActor func zipfUser() -> Int {
    let u = Double.random(in: 0..<1, using: &random)
    return min(users - 1, Int(exp(u * harmonic - 0.5772)))
}
let smallRegistry = PrometheusCollectorRegistry()
var smallConfiguration = ContextCache.Configuration()
smallConfiguration.maxEntries = users / 10
let smallCache = ContextCache(
    store: store, configuration: smallConfiguration, metrics: ContextCacheMetrics(registry: smallRegistry),
    logger: logger)
for _ in 0..<400 { _ = smallCache.resolve((0..<500).map { _ in "user-\(zipfUser())" }) }  // warm-up
@MainActor func counter(_ registry: PrometheusCollectorRegistry, _ name: String) -> Double {
    registry.samples[name] ?? 0
}
let hitsBefore = counter(smallRegistry, "focusgate_context_cache_hits_total")
let missesBefore = counter(smallRegistry, "focusgate_context_cache_misses_total")
for _ in 0..<1000 { _ = smallCache.resolve((0..<500).map { _ in "user-\(zipfUser())" }) }
let hits = counter(smallRegistry, "focusgate_context_cache_hits_total") - hitsBefore
let misses = counter(smallRegistry, "focusgate_context_cache_misses_total") - missesBefore
let hitRatio = hits / (hits + misses)
rows.append(
    (
        "CLOCK hit ratio, cache of 10% of users, Zipf(1) access", String(format: "%.3f", hitRatio),
        #"{"benchmark":"clock-hit-ratio","capacity_fraction":0.1,"hit_ratio":\#(String(format: "%.4f", hitRatio))}"#
    ))

// MARK: - Invalidation to effect: PUT through the admin API → first decision with the new version

let broker = try EmbeddedKafkaBroker(topics: TopicNames().specifications(partitions: 8), logger: logger)
let producer = try KafkaAsyncProducer(configuration: .init(bootstrapServers: broker.bootstrapServers), logger: logger)
let listener = InvalidationListener(
    configuration: .init(bootstrapServers: broker.bootstrapServers, groupID: nil), topic: "focus.invalidations",
    cache: cache, logger: logger
) { _, _ in }
let listening = Task { try await listener.run() }
while !listener.isPositioned { try await Task.sleep(for: .milliseconds(20)) }
let adminPort = 18_000 + Int.random(in: 0..<1000)
let api = AdminAPI(
    configuration: .init(), store: store,
    publisher: KafkaInvalidationPublisher(producer: producer, topic: "focus.invalidations"),
    users: nil, registry: registry, logger: logger, readiness: { Readiness(checks: [:]) }
)
let application = Application(
    router: api.router(), configuration: .init(address: .hostname("127.0.0.1", port: adminPort)), logger: logger)
let serving = Task { try await application.runService() }
var up = false
while !up {
    up = (try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(adminPort)/healthz")!)) != nil
    if !up { try await Task.sleep(for: .milliseconds(50)) }
}
var latencies: [Double] = []
for round in 0..<300 {
    let userID = "user-\(round * 2)"  // cached, Focus on
    _ = cache.resolve([userID])
    let version = Int64(2 + round)
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(adminPort)/v1/users/\(userID)/context")!)
    request.httpMethod = "PUT"
    request.httpBody = Data(
        #"{"userId":"\#(userID)","version":\#(version),"focus":"Personal","apps":{"com.example.chat":{"filterPredicate":"TRUEPREDICATE"}}}"#
            .utf8)
    let sent = ContinuousClock.now
    _ = try await URLSession.shared.data(for: request)
    while true {
        if case .available(let context)? = cache.resolve([userID])[UserID(userID)], context?.version == version {
            break
        }
        try await Task.sleep(for: .microseconds(200))
    }
    latencies.append((ContinuousClock.now - sent) / .milliseconds(1))
}
let p50 = percentile(latencies, 0.5)
let p99 = percentile(latencies, 0.99)
rows.append(
    (
        "invalidation to effect (PUT → first decision with the new version), 300 PUTs",
        String(format: "p50 %.1f ms · p99 %.1f ms", p50, p99),
        #"{"benchmark":"invalidation-latency","count":300,"p50_ms":\#(String(format: "%.2f", p50)),"p99_ms":\#(String(format: "%.2f", p99))}"#
    ))
serving.cancel()
listening.cancel()
producer.shutdown()
await store.close()

print("| context plane benchmark | result |")
print("|---|---|")
for row in rows { print("| \(row.0) | \(row.1) |") }
for row in rows { print(row.2) }
broker.shutdown()
exit(0)
