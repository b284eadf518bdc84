// FocusGateCore figures: decoding, predicate evaluation, decisions, and memory per cached context.
//
//   swift run -c release CoreBenchmark
import FocusGateCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

var rows: [(name: String, value: String, json: String)] = []

/// Runs `body` `iterations` times in five rounds (after a warm-up) and records the fastest
/// round's ns/op and ops/s: on a shared VM the fastest round is the least disturbed one.
@MainActor @discardableResult
func measure(_ name: String, iterations: Int, _ body: () -> Int) -> Double {
    var sink = 0
    for _ in 0..<min(iterations / 10, 10_000) { sink &+= body() }
    let roundIterations = max(iterations / 5, 1)
    var seconds = Double.infinity
    for _ in 0..<5 {
        let start = ContinuousClock.now
        for _ in 0..<roundIterations { sink &+= body() }
        seconds = min(seconds, (ContinuousClock.now - start) / .seconds(1))
    }
    let iterations = roundIterations
    let nanos = seconds / Double(iterations) * 1e9
    let rate = Double(iterations) / seconds
    rows.append(
        (
            name, String(format: "%.0f ns/op · %.2f M ops/s", nanos, rate / 1e6),
            #"{"benchmark":"\#(name)","ns_per_op":\#(String(format: "%.1f", nanos)),"ops_per_s":\#(String(format: "%.0f", rate)),"sink":\#(sink & 1)}"#
        ))
    return rate
}

// MARK: - Partition state (what a worker does per record besides decoding and deciding)

/// The partition state at steady state with 1 and with 50 earlier notifications a user,
/// measured in alternating slices (the two runs see the same machine, slice by slice): the
/// ratio of their rates per pair of slices, its median and range, and each one's changelog.
@MainActor func stateHistoryBenchmarks(pairs: Int = 9, slice: Int = 100_000) {
    // One event stream's worth for the warm-up and every slice: no id comes twice.
    var fewEarlier = SteadyStateRun(history: 1, records: (pairs + 1) * slice)
    var manyEarlier = SteadyStateRun(history: 50, records: (pairs + 1) * slice)
    fewEarlier.run(slice, timed: false)
    manyEarlier.run(slice, timed: false)
    var ratios: [Double] = []
    for pair in 0..<pairs {
        // Which goes first alternates too, so that neither always follows the other.
        let before = (few: fewEarlier.measured, many: manyEarlier.measured)
        if pair % 2 == 0 {
            fewEarlier.run(slice)
            manyEarlier.run(slice)
        } else {
            manyEarlier.run(slice)
            fewEarlier.run(slice)
        }
        let few = fewEarlier.measured.seconds - before.few.seconds
        let many = manyEarlier.measured.seconds - before.many.seconds
        ratios.append(few / many)  // rate with 50 ÷ rate with 1, equal record counts
    }
    ratios.sort()
    let median = ratios[ratios.count / 2]
    for (history, run) in [(1, fewEarlier), (50, manyEarlier)] {
        let nanos = run.measured.seconds / Double(run.measured.records) * 1e9
        rows.append(
            (
                "partition state per record at steady state: \(history) earlier notification(s) a user, Zipf users, reads and clears; changelog and commit every 2,048",
                String(format: "%.0f ns/op · %.2f M ops/s (%d slices of %d)", nanos, 1e3 / nanos, pairs, slice),
                #"{"benchmark":"state-steady-\#(history)","ns_per_op":\#(String(format: "%.1f", nanos)),"sink":\#(run.sink & 1)}"#
            ))
    }
    let few = fewEarlier.changelogPerRecord
    let many = manyEarlier.changelogPerRecord
    rows.append(
        (
            "partition state: rate with 50 earlier notifications a user / with 1 (median of \(pairs) alternating pairs, range); changelog bytes and records per record",
            String(
                format: "%.2f (%.2f–%.2f); %.1f B in %.2f records (1 earlier), %.1f B in %.2f records (50 earlier)",
                median, ratios.first!, ratios.last!, few.bytes, few.records, many.bytes, many.records),
            #"{"benchmark":"state-history-ratio","ratio":\#(String(format: "%.3f", median)),"ratio_min":\#(String(format: "%.3f", ratios.first!)),"ratio_max":\#(String(format: "%.3f", ratios.last!)),"changelog_bytes_per_record_1":\#(String(format: "%.1f", few.bytes)),"changelog_bytes_per_record_50":\#(String(format: "%.1f", many.bytes)),"changelog_records_per_record_50":\#(String(format: "%.3f", many.records))}"#
        ))
}

// `CoreBenchmark MODE`: one group of figures alone (for profilers), printed as table rows and
// JSON lines.
let modes: [String: @MainActor () -> Void] = [
    // The partition state at steady state, users with 1 and with 50 earlier notifications.
    "state": { stateHistoryBenchmarks() },
    // A restored partition's backlog, users with 1 and with 50 earlier notifications.
    "restart": { restartBacklogBenchmark() },
    // Ids chosen to collide in an unseeded entry table against ordinary ids.
    "collide": { collidingIDsBenchmark() },
    // A month of users coming and going under a short retention.
    "month": { retentionMonthBenchmark() },
    // A rollback of the same changes with 1,000 and with 1,000,000 users.
    "rollback": { rollbackBenchmark() },
    // Timer memory per user and a mass Focus transition.
    "timers": { timerBenchmark() },
    // Partition state memory per user and per entry (unread, read, silenced), and per cached context.
    "memory": {
        stateMemoryBenchmark()
        stateMemoryBenchmark(read: true)
        stateMemoryBenchmark(silenced: true)
        contextMemoryBenchmark()
    },
    // Restoring partition states from their changelog records (USERS users, 1,000,000 by default).
    "restore": { restoreBenchmark(users: ProcessInfo.processInfo.environment["USERS"].flatMap(Int.init) ?? 1_000_000) },
    // Deciding with the state, people lists and rate limits.
    "limits": { peopleAndLimitsBenchmark() },
]
if let mode = CommandLine.arguments.dropFirst().first, let run = modes[mode] {
    run()
    for row in rows { print("| \(row.name) | \(row.value) |") }
    for row in rows { print(row.json) }
    exit(0)
}

// MARK: - Output records

/// Writing a badge update's key and JSON value into reused buffers, as a commit does for each
/// one: the user ids vary, the Focus is on for every second one.
@MainActor func outputBenchmark() {
    let updates = (0..<1_024).map { index in
        BadgeUpdate(
            userID: "u-\(index * 97)", appID: "com.example.chat", badge: index % 7, unread: index % 11,
            focus: index % 2 == 0 ? "Sleep" : nil, contextVersion: index % 2 == 0 ? 3 : nil,
            sequence: UInt64(index * 13), updatedAtMilliseconds: 1_795_000_000_000 + Int64(index))
    }
    var key: [UInt8] = []
    var value: [UInt8] = []
    var index = 0
    measure("badge update: key and JSON value written into reused buffers", iterations: 2_000_000) {
        let update = updates[index & 1_023]
        index &+= 1
        update.writeKey(into: &key)
        update.writeJSON(into: &value)
        return key.count &+ value.count
    }
}

// `CoreBenchmark outputs`: only writing output records, for profilers.
if CommandLine.arguments.dropFirst().first == "outputs" {
    outputBenchmark()
    for row in rows { print("| \(row.name) | \(row.value) |") }
    exit(0)
}

// MARK: - Decoding

let plainEvent = Array(
    #"{"type":"notification","id":"n-1234567","userId":"u-4242","appId":"com.example.chat","filterCriteria":"work-account-identifier","interruptionLevel":"active","relevanceScore":0.5,"payload":{"threadId":"t-99","sender":"ann","preview":"Lunch at noon? Bring the quarterly numbers."}}"#
        .utf8)
let apnsEvent = Array(
    #"{"id":"n-1234567","userId":"u-4242","appId":"com.example.chat","aps":{"alert":{"title":"New message","body":"Lunch at noon? Bring the quarterly numbers please."},"sound":"default","filter-criteria":"work-account-identifier","interruption-level":"time-sensitive","relevance-score":0.8},"payload":{"threadId":"t-99"}}"#
        .utf8)
let decoder = EventDecoder()

struct FoundationEvent: Decodable {
    struct APS: Decodable {
        var filterCriteria: String?
        var interruptionLevel: String?
        var relevanceScore: Double?
        enum CodingKeys: String, CodingKey {
            case filterCriteria = "filter-criteria", interruptionLevel = "interruption-level", relevanceScore =
                "relevance-score"
        }
    }
    var type: String?
    var id: String
    var userId: String
    var appId: String
    var filterCriteria: String?
    var interruptionLevel: String?
    var relevanceScore: Double?
    var aps: APS?
}

let plainData = Data(plainEvent)
let apnsData = Data(apnsEvent)
let jsonDecoder = JSONDecoder()
// `DECODE_ITERATIONS` shortens the decoding runs (for callgrind).
let decodeIterations = ProcessInfo.processInfo.environment["DECODE_ITERATIONS"].flatMap(Int.init) ?? 2_000_000
let decodeRate = plainEvent.withUnsafeBytes { bytes in
    measure("decode plain event (\(plainEvent.count) B)", iterations: decodeIterations) {
        (try? decoder.decode(value: bytes, key: nil))?.id.utf8.count ?? 0
    }
}
apnsEvent.withUnsafeBytes { bytes in
    _ = measure("decode APNs event (\(apnsEvent.count) B)", iterations: decodeIterations) {
        (try? decoder.decode(value: bytes, key: nil))?.id.utf8.count ?? 0
    }
}
// As the worker decodes: app ids and criteria from its pool, the user's key beside the value.
var workerIdentifiers = IdentifierPool()
let workerKey = Array("u-4242".utf8)
for (name, event) in [("plain", plainEvent), ("APNs", apnsEvent)] {
    event.withUnsafeBytes { bytes in
        workerKey.withUnsafeBytes { key in
            _ = measure(
                "decode \(name) event as the worker does (app ids and criteria pooled, key checked)",
                iterations: decodeIterations
            ) {
                (try? decoder.decode(value: bytes, key: key, identifiers: &workerIdentifiers))?.id.utf8.count ?? 0
            }
        }
    }
}
let foundationRate = measure("Foundation JSONDecoder, same plain event", iterations: decodeIterations / 10) {
    (try? jsonDecoder.decode(FoundationEvent.self, from: plainData))?.id.utf8.count ?? 0
}
rows.append(
    (
        "decode speed-up over JSONDecoder", String(format: "%.1f×", decodeRate / foundationRate),
        #"{"benchmark":"decode-ratio","ratio":\#(String(format: "%.2f", decodeRate / foundationRate))}"#
    ))

// `CoreBenchmark decode` stops here: a short run for profilers.
if CommandLine.arguments.dropFirst().first == "decode" {
    for row in rows { print("| \(row.name) | \(row.value) |") }
    exit(0)
}

// MARK: - Evaluation

@MainActor func predicateBench(_ name: String, _ text: String, arguments: [FilterArgument] = [], criteria: String) {
    let predicate = try! FilterPredicate(text, arguments: arguments)
    measure(name, iterations: 5_000_000) { (try? predicate.evaluate(criteria)) == true ? 1 : 0 }
}
predicateBench("evaluate IN, 1 item", "SELF IN {'work-account-identifier'}", criteria: "work-account-identifier")
predicateBench(
    "evaluate IN, 10 items", "SELF IN %@", arguments: [.array((0..<10).map { .string("account-\($0)") })],
    criteria: "account-9")
predicateBench(
    "evaluate IN, 1000 items", "SELF IN %@", arguments: [.array((0..<1000).map { .string("account-\($0)") })],
    criteria: "account-999")
predicateBench("evaluate LIKE", "SELF LIKE 'work-*-id?'", criteria: "work-account-ids")
predicateBench("evaluate ==[cd], ASCII criteria", "SELF ==[cd] 'WORK-ACCOUNT'", criteria: "work-account")
predicateBench("evaluate ==[cd], non-ASCII criteria", "SELF ==[cd] 'ECOLE'", criteria: "école")

// MARK: - Decision per event

var compiler = FocusContextCompiler()
let context = try! compiler.compile(
    FocusContext(
        userID: "u-4242", version: 3, focus: "Work",
        apps: ["com.example.chat": .init(filterPredicate: "SELF IN {'work-account-identifier'}")]
    ))
let contexts: [String: CompiledFocusContext] = ["u-4242": context]
let now = Int64(Date().timeIntervalSince1970 * 1000)
plainEvent.withUnsafeBytes { bytes in
    _ = measure("decode + context lookup + decide", iterations: 2_000_000) {
        guard let event = try? decoder.decode(value: bytes, key: nil) else { return 0 }
        let decision = FocusDecider.decide(event, lookup: .available(contexts[event.userID]), nowMilliseconds: now)
            .decision
        return decision.outcome == .delivered ? 1 : 0
    }
}

// The same with the event naming a sender: a context without people lists, then one with 5,000
// allowed and 5,000 silenced people (the sender on neither list, so the filter still decides).
let senderEvent = Array(
    #"{"type":"notification","id":"n-1234567","userId":"u-4242","appId":"com.example.chat","senderId":"contact-0000042-x","filterCriteria":"work-account-identifier","interruptionLevel":"active","relevanceScore":0.5,"payload":{"threadId":"t-99","preview":"Lunch at noon?"}}"#
        .utf8)
let withPeople = try! compiler.compile(
    FocusContext(
        userID: "u-4242", version: 4, focus: "Work",
        apps: ["com.example.chat": .init(filterPredicate: "SELF IN {'work-account-identifier'}")],
        people: .init(
            allowed: (0..<5_000).map { "contact-\($0)-allowed" }, silenced: (0..<5_000).map { "contact-\($0)-muted" })
    ))
var peopleRates: [Double] = []
for (name, compiled) in [("no people lists", context), ("5,000 + 5,000 people", withPeople)] {
    let lookup: [String: CompiledFocusContext] = ["u-4242": compiled]
    senderEvent.withUnsafeBytes { bytes in
        peopleRates.append(
            measure("decode + context lookup + decide, with a sender, \(name)", iterations: 2_000_000) {
                guard let event = try? decoder.decode(value: bytes, key: nil) else { return 0 }
                let decision = FocusDecider.decide(
                    event, lookup: .available(lookup[event.userID]), nowMilliseconds: now
                ).decision
                return decision.outcome == .delivered ? 1 : 0
            })
    }
}
rows.append(
    (
        "decision rate with 5,000-person lists / without (goal ≥ 0.9)",
        String(format: "%.3f", peopleRates[1] / peopleRates[0]),
        #"{"benchmark":"people-lists-ratio","ratio":\#(String(format: "%.3f", peopleRates[1] / peopleRates[0]))}"#
    ))

// MARK: - Partition state

stateHistoryBenchmarks()
outputBenchmark()
peopleAndLimitsBenchmark()
restoreBenchmark()
stateMemoryBenchmark()
stateMemoryBenchmark(read: true)
stateMemoryBenchmark(silenced: true)

// MARK: - Memory per cached context

/// Resident bytes of this process (/proc/self/statm), for growth measured across a large allocation.
func heapInUse() -> Int {
    // Freed memory first goes back to the system (glibc's malloc_trim, not exported by the Glibc
    // module), so that an earlier benchmark's freed pages do not hide the growth being measured.
    typealias Trim = @convention(c) (Int) -> Int32
    if let trim = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(trim, to: Trim.self)(0) }
    // Read to the end: a /proc file reports a size of 0, which a whole-file read may trust.
    let data = FileHandle(forReadingAtPath: "/proc/self/statm")?.readDataToEndOfFile() ?? Data()
    let fields = String(decoding: data, as: UTF8.self).split(separator: " ")
    return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Resident bytes per compiled context in a cache of 1,000,000 (one app, a one-item `IN`),
/// beyond the user id, and what a set of the user ids alone costs per id.
@MainActor func contextMemoryBenchmark() {
    let users = 1_000_000
    let userIDs = (0..<users).map { "user-\($0)-\(String(repeating: "x", count: 8))" }  // 20+ bytes: heap-allocated ids
    let baseline = heapInUse()
    var idsOnly = Set<String>(minimumCapacity: users)
    for id in userIDs { idsOnly.insert(id) }
    let withIDs = heapInUse()
    var cache = [String: CompiledFocusContext](minimumCapacity: users)
    var memoryCompiler = FocusContextCompiler()
    for (index, id) in userIDs.enumerated() {
        let document = FocusContext(
            userID: id, version: Int64(index), focus: "Work",
            apps: ["com.example.chat": .init(filterPredicate: "SELF IN {'work-account-identifier'}")]
        )
        cache[id] = try! memoryCompiler.compile(document)
    }
    let withContexts = heapInUse()
    let idBytes = Double(withIDs - baseline) / Double(users)
    let perContext = Double(withContexts - withIDs) / Double(users)
    rows.append(
        (
            "resident bytes per cached context beyond the user id (1,000,000 users, one app, one-item IN)",
            String(format: "%.0f B (a user-id set costs %.0f B per id)", perContext, idBytes),
            #"{"benchmark":"context-bytes","users":\#(users),"bytes_per_context":\#(String(format: "%.1f", perContext)),"bytes_per_id_in_set":\#(String(format: "%.1f", idBytes)),"cache_entries":\#(cache.count + idsOnly.count - users)}"#
        ))
}

contextMemoryBenchmark()

// MARK: - Report

print("| FocusGateCore benchmark | result |")
print("|---|---|")
for row in rows { print("| \(row.name) | \(row.value) |") }
for row in rows { print(row.json) }
