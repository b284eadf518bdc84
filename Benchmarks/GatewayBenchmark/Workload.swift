import BenchmarkSupport
import FocusGateCore
import FocusGateKafka
import Foundation

// MARK: - The workload: who each record is for, the records, and each run's history

/// The input partition of a user: the benchmark places records itself, so that the history in
/// the state changelog is where the user's records are.
func partition(ofUser user: Int) -> Int32 { Int32(user % partitions) }

/// Who each record is for: the warm-up visits every user once; the measured records follow a Zipf
/// distribution (s = 1). A read names the user's latest notification and one from 40 before.
let plan: (users: [Int32], latest: [Int32], earlier: [Int32]) = {
    var random = SplitMix(state: 7)
    let zipf = Zipf(count: users, exponent: 1)
    var byRecord = [Int32](repeating: 0, count: warmup + recordCount)
    var latest = [Int32](repeating: -1, count: warmup + recordCount)
    var earlier = [Int32](repeating: -1, count: warmup + recordCount)
    var seen = [[Int32]](repeating: [], count: users)
    for index in 0..<(warmup + recordCount) {
        let user = index < warmup ? index : zipf.sample(&random)
        byRecord[index] = Int32(user)
        latest[index] = seen[user].last ?? -1
        earlier[index] = seen[user].count > 40 ? seen[user][seen[user].count - 41] : -1
        if seen[user].count < 64 {
            seen[user].append(Int32(index))
        } else {
            seen[user].removeFirst(); seen[user].append(Int32(index))
        }
    }
    return (byRecord, latest, earlier)
}()

/// About 1% bad records, 3% reads, 1% clears, the rest notifications, APNs-shaped and plain.
func event(_ index: Int, sentAtMicros: Int64 = 0) -> (key: [UInt8], value: [UInt8], partition: Int32) {
    // Records past the plan (the latency runs) go to users in turn.
    let planned = index < plan.users.count
    let userIndex = planned ? Int(plan.users[index]) : (index &* 7919) % users
    let user = userName(userIndex)
    let app = apps[index % apps.count]
    let json: String
    switch index % 100 {
    case 42:
        // Truncated: invalid JSON.
        json = #"{"id":"\#(notificationName("n", index))","userId":"\#(user)","appId":"#
    case 43, 44, 45:
        json =
            #"{"type":"read","id":"\#(notificationName("r", index))","userId":"\#(user)","appId":"\#(app)","notificationIds":["\#(notificationName("n", planned ? Int(plan.latest[index]) : -1))","\#(notificationName("n", planned ? Int(plan.earlier[index]) : -1))"]}"#
    case 46: json = #"{"type":"clear","id":"\#(notificationName("c", index))","userId":"\#(user)","appId":"\#(app)"}"#
    default:
        let level = index % 17 == 0 ? "time-sensitive" : (index % 101 == 0 ? "critical" : "active")
        json =
            index % 2 == 0
            ? #"{"id":"\#(notificationName("n", index))","userId":"\#(user)","appId":"\#(app)","aps":{"alert":{"title":"New message","body":"Lunch at noon? Bring the quarterly numbers."},"filter-criteria":"\#(criteria[index % criteria.count])","interruption-level":"\#(level)","relevance-score":0.4},"sentAtUs":\#(sentAtMicros)}"#
            : #"{"id":"\#(notificationName("n", index))","userId":"\#(user)","appId":"\#(app)","filterCriteria":"\#(criteria[index % criteria.count])","interruptionLevel":"\#(level)","payload":{"thread":"t-\#(index % 50)"},"sentAtUs":\#(sentAtMicros)}"#
    }
    return (Array(user.utf8), Array(json.utf8), partition(ofUser: userIndex))
}

/// The state changelog of `users` with `history` earlier notifications each, over the apps,
/// every second one read, decided at `now` under each user's `context`, as the engine itself
/// writes it (a commit per user), then a commit marker.
func historyChangelog(
    users: StrideTo<Int>, history: Int, now: Int64, context: (Int) -> CompiledFocusContext? = { _ in nil }
) -> [(key: [UInt8], value: [UInt8]?)] {
    var state = PartitionState()
    var records: [(key: [UInt8], value: [UInt8]?)] = []
    for user in users {
        let context = context(user)
        for round in 0..<history {
            let app = apps[round % apps.count]
            _ = state.apply(
                NotificationEvent(
                    id: notificationName("h", round), userID: userName(user), appID: app,
                    filterCriteria: criteria[round % criteria.count]),
                lookup: .available(context), nowMilliseconds: now
            )
            if round % 2 == 1 {
                _ = state.apply(
                    NotificationEvent(
                        kind: .read, id: "r", userID: userName(user), appID: app,
                        notificationIDs: [notificationName("h", round)]),
                    lookup: .available(context), nowMilliseconds: now
                )
            }
        }
        state.writeChanges { key, value in records.append((key, value)) }
        state.commit()
    }
    records.append((PartitionState.commitMarkerKey, PartitionState.commitMarkerValue(through: 0)))
    return records
}

/// Each user's history as the state changelog holds it, per partition. Built once.
let historyRecords: [[(key: [UInt8], value: [UInt8]?)]] = (0..<partitions).map { partition in
    historyChangelog(
        users: stride(from: partition, to: users, by: partitions), history: history, now: 1_795_000_000_000)
}

/// Produces what `body` gives a producer of the benchmark's broker, polling it every 10,000
/// records (`body` calls `poll` with its count), then waits for every delivery; stops the
/// benchmark when one failed.
func produceAll(_ what: String, _ body: (_ producer: KafkaProducer, _ poll: (Int) -> Void) throws -> Void) throws {
    var failed = 0
    let producer = try KafkaProducer(
        configuration: KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers), logger: logger,
        onDeliveryReport: { if $0.error != nil { failed += 1 } }
    )
    try body(producer) { count in if count % 10_000 == 0 { producer.poll() } }
    try producer.flush(timeout: .seconds(120))
    precondition(failed == 0, "\(failed) \(what) were not delivered")
}

/// Writes the history into a run's state topic, each record with the `as-of` header a worker's
/// commit gives it.
func preloadHistory(topic: String, records historyRecords: [[(key: [UInt8], value: [UInt8]?)]]) throws {
    try preloadHistory(topic: topic, partitions: historyRecords.count) { historyRecords[$0] }
}

/// Writes each partition's history as `records` gives it (one partition's at a time in memory).
/// Returns how many records were written.
@discardableResult
func preloadHistory(
    topic: String, partitions: Int, records: (_ partition: Int) -> [(key: [UInt8], value: [UInt8]?)]
) throws -> Int {
    let asOf = [KafkaHeader(name: PartitionState.asOfHeader, value: PartitionState.commitMarkerValue(through: 0))]
    var written = 0
    try produceAll("history records") { producer, poll in
        for partition in 0..<partitions {
            for record in records(partition) {
                try producer.produce(
                    topic: topic, partition: Int32(partition), key: record.key, value: record.value,
                    headers: record.key == PartitionState.commitMarkerKey ? [] : asOf)
                written += 1
                poll(written)
            }
        }
    }
    return written
}

func produce(topic: String, range: Range<Int>) throws {
    try produceAll("records") { producer, poll in
        for index in range {
            let record = event(index)
            try producer.produce(topic: topic, partition: record.partition, key: record.key, value: record.value)
            poll(index)
        }
    }
}
