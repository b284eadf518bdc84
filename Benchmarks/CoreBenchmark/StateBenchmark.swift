import BenchmarkSupport
import FocusGateCore
import Foundation

// MARK: - Partition state at steady state

/// A partition's share of 100,000 users over 16 partitions (6,250), each given `history`
/// earlier notifications (half of them read) before the measurement. Then the measured stream:
/// users drawn from a Zipf distribution (s = 1), 85% notifications with new ids, 10% reads of a
/// user's latest id, 5% clears; a commit every 2,048 records writes the changed keys' changelog
/// records. Runs in slices (``run(_:)``), so that two histories can be measured alternately.
struct SteadyStateRun {
    private var state = PartitionState()
    private let events: [NotificationEvent]
    private var position = 0
    private var changelogBytes = 0
    private var changelogRecords = 0
    /// Records and seconds of the measured slices.
    private(set) var measured = (records: 0, seconds: 0.0)
    private(set) var sink = 0

    init(history: Int, records: Int = 1_000_000) {
        let users = (0..<6_250).map { "user-\($0)" }
        // Events built before timing: the benchmark measures the state, not string formatting.
        var random = SplitMix(state: 42)
        let zipf = Zipf(count: users.count, exponent: 1)
        var latest = [Int](repeating: -1, count: users.count)
        self.events = (0..<records).map { index in
            let user = zipf.sample(&random)
            let roll = Int(random.next() % 100)
            if roll < 10 && latest[user] >= 0 {
                return NotificationEvent(
                    kind: .read, id: "r-\(index)", userID: users[user], appID: "com.example.chat",
                    notificationIDs: ["n-\(latest[user])"])
            } else if roll < 15 {
                return NotificationEvent(kind: .clear, id: "c-\(index)", userID: users[user], appID: "com.example.chat")
            }
            latest[user] = index
            return NotificationEvent(
                id: "n-\(index)", userID: users[user], appID: "com.example.chat", filterCriteria: "work")
        }
        for round in 0..<history {
            for user in users {
                _ = self.state.admit(
                    NotificationEvent(
                        id: "h-\(round)", userID: user, appID: "com.example.chat", filterCriteria: "work"),
                    context: nil, nowMilliseconds: 0)
                if round % 2 == 1 {
                    _ = self.state.admit(
                        NotificationEvent(
                            kind: .read, id: "r", userID: user, appID: "com.example.chat",
                            notificationIDs: ["h-\(round)"]),
                        context: nil, nowMilliseconds: 0)
                }
            }
            self.commit()
        }
        self.changelogBytes = 0
        self.changelogRecords = 0
    }

    private mutating func commit() {
        var bytes = 0
        var records = 0
        self.state.writeChanges { key, value in
            bytes += key.count + (value?.count ?? 0)
            records += 1
        }
        self.state.commit()
        self.changelogBytes += bytes
        self.changelogRecords += records
    }

    /// Takes the next `records` events of the stream (from its start again after its end), with
    /// a commit every 2,048; `timed` counts them in ``measured``.
    mutating func run(_ records: Int, timed: Bool = true) {
        let started = ContinuousClock.now
        for _ in 0..<records {
            let event = self.events[self.position % self.events.count]
            self.position += 1
            if case .applied(let update) = self.state.admit(event, context: nil, nowMilliseconds: 0), update != nil {
                self.sink &+= 1
            }
            if self.position % 2048 == 0 { self.commit() }
        }
        guard timed else { return }
        self.measured.records += records
        self.measured.seconds += (ContinuousClock.now - started) / .seconds(1)
    }

    /// Changelog bytes (key + value) and records per record taken.
    var changelogPerRecord: (bytes: Double, records: Double) {
        (Double(self.changelogBytes) / Double(self.position), Double(self.changelogRecords) / Double(self.position))
    }
}

/// The changelog of 1,000,000 users with history (16 partitions' worth, built by the engine),
/// then restored partition by partition from the records: what a worker does after reading them.
@MainActor func restoreBenchmark(users: Int = 1_000_000, partitions: Int = 16, history: Int = 5) {
    var logs: [[([UInt8], [UInt8]?)]] = []
    var bytes = 0
    for partition in 0..<partitions {
        var state = PartitionState()
        var log: [([UInt8], [UInt8]?)] = []
        for round in 0..<history {
            for user in stride(from: partition, to: users, by: partitions) {
                _ = state.admit(
                    NotificationEvent(
                        id: "h-\(round)", userID: "user-\(user)", appID: "com.example.chat", filterCriteria: "work"),
                    context: nil, nowMilliseconds: 1_795_000_000_000)
            }
            state.writeChanges { key, value in
                log.append((key, value))
                bytes += key.count + (value?.count ?? 0)
            }
            state.commit()
        }
        logs.append(log)
    }
    let records = logs.reduce(0) { $0 + $1.count }
    let started = ContinuousClock.now
    var restoredUsers = 0
    var restoredEntries = 0
    for log in logs {
        var state = PartitionState()
        for (key, value) in log { try! state.restore(key: key, value: value) }
        state.finishRestore()
        restoredUsers += state.userCount
        restoredEntries += state.entryCount
    }
    let seconds = (ContinuousClock.now - started) / .seconds(1)
    rows.append(
        (
            "restore \(users) users × \(history) unread from \(records) changelog records (\(bytes / 1_000_000) MB)",
            String(
                format: "%.2f s (%.0f k records/s); %d users, %d entries", seconds, Double(records) / seconds / 1000,
                restoredUsers, restoredEntries),
            #"{"benchmark":"state-restore","users":\#(restoredUsers),"entries":\#(restoredEntries),"records":\#(records),"bytes":\#(bytes),"seconds":\#(String(format: "%.3f", seconds))}"#
        ))
}

/// Resident bytes per user and per entry: users with `history` unread notifications each. With
/// `silenced`, the further notifications are silenced by a Focus and carry a thread, so each
/// entry also keeps what a summary lists of it (id, input offset, Focus, thread).
@MainActor func stateMemoryBenchmark(users: Int = 200_000, history: Int = 20, silenced: Bool = false) {
    var compiler = FocusContextCompiler()
    let sleep = try! compiler.compile(
        FocusContext(userID: "u", version: 1, focus: "Sleep", otherApps: .silence, summaries: .init()))
    let before = heapInUse()
    var state = PartitionState()
    for user in 0..<users {
        _ = state.admit(
            NotificationEvent(id: "h-0", userID: "user-\(user)", appID: "com.example.chat", filterCriteria: "work"),
            context: nil, nowMilliseconds: 0)
    }
    state.commit()
    let oneEach = heapInUse()
    for round in 1..<history {
        for user in 0..<users {
            _ = state.admit(
                NotificationEvent(
                    id: "6f1c2d3e-0000-4000-8000-\(String(format: "%012d", round * users + user))",
                    userID: "user-\(user)", appID: "com.example.chat",
                    filterCriteria: "work", threadID: silenced ? "thread-\(round % 4)" : nil),
                context: silenced ? sleep : nil, nowMilliseconds: 0, silenced: silenced,
                sourceOffset: Int64(round * users + user))
        }
        state.commit()
    }
    let after = heapInUse()
    let perUser = Double(oneEach - before) / Double(users)
    let perEntry = Double(after - oneEach) / Double(users * (history - 1))
    let kind = silenced ? "silenced" : "delivered"
    rows.append(
        (
            "resident bytes of partition state (\(users) users, then \(history) unread \(kind) each)",
            String(format: "%.0f B per user with one entry; %.0f B per further \(kind) entry", perUser, perEntry),
            #"{"benchmark":"state-memory","further":"\#(kind)","bytes_per_user":\#(String(format: "%.1f", perUser)),"bytes_per_entry":\#(String(format: "%.1f", perEntry)),"entries":\#(state.entryCount)}"#
        ))
}
