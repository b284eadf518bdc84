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
                _ = self.state.apply(
                    NotificationEvent(
                        id: "h-\(round)", userID: user, appID: "com.example.chat", filterCriteria: "work"),
                    lookup: .available(nil), nowMilliseconds: 0
                )
                if round % 2 == 1 {
                    _ = self.state.apply(
                        NotificationEvent(
                            kind: .read, id: "r", userID: user, appID: "com.example.chat",
                            notificationIDs: ["h-\(round)"]),
                        lookup: .available(nil), nowMilliseconds: 0
                    )
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
            if case .applied(let update) = self.state.apply(event, lookup: .available(nil), nowMilliseconds: 0)
                .admission, update != nil
            {
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
                _ = state.apply(
                    NotificationEvent(
                        id: "h-\(round)", userID: "user-\(user)", appID: "com.example.chat", filterCriteria: "work"),
                    lookup: .available(nil), nowMilliseconds: 1_795_000_000_000
                )
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
/// entry also keeps what a summary lists of it (id, input offset, Focus, thread). With `read`,
/// each further notification is read as it comes: the entry is a remembered id (dedupe, history)
/// and no longer unread, so the difference from the unread run is what an unread one adds.
@MainActor func stateMemoryBenchmark(
    users: Int = 200_000, history: Int = 20, silenced: Bool = false, read: Bool = false
) {
    var compiler = FocusContextCompiler()
    let sleep = try! compiler.compile(
        FocusContext(userID: "u", version: 1, focus: "Sleep", otherApps: .silence, summaries: .init()))
    let before = heapInUse()
    var state = PartitionState()
    for user in 0..<users {
        _ = state.apply(
            NotificationEvent(id: "h-0", userID: "user-\(user)", appID: "com.example.chat", filterCriteria: "work"),
            lookup: .available(nil), nowMilliseconds: 0
        )
    }
    state.commit()
    let oneEach = heapInUse()
    for round in 1..<history {
        for user in 0..<users {
            let id = "6f1c2d3e-0000-4000-8000-\(String(format: "%012d", round * users + user))"
            _ = state.apply(
                NotificationEvent(
                    id: id, userID: "user-\(user)", appID: "com.example.chat",
                    filterCriteria: "work", threadID: silenced ? "thread-\(round % 4)" : nil),
                lookup: .available(silenced ? sleep : nil), nowMilliseconds: 0,
                sourceOffset: Int64(round * users + user)
            )
            if read {
                _ = state.apply(
                    NotificationEvent(
                        kind: .read, id: "r", userID: "user-\(user)", appID: "com.example.chat",
                        notificationIDs: [id]),
                    lookup: .available(nil), nowMilliseconds: 0
                )
            }
        }
        state.commit()
    }
    let after = heapInUse()
    let perUser = Double(oneEach - before) / Double(users)
    let perEntry = Double(after - oneEach) / Double(users * (history - 1))
    let kind = (silenced ? "silenced" : "delivered") + (read ? " and read" : "")
    rows.append(
        (
            "resident bytes of partition state (\(users) users, then \(history) \(read ? "" : "unread ")\(kind) each)",
            String(format: "%.0f B per user with one entry; %.0f B per further \(kind) entry", perUser, perEntry),
            #"{"benchmark":"state-memory","further":"\#(kind)","bytes_per_user":\#(String(format: "%.1f", perUser)),"bytes_per_entry":\#(String(format: "%.1f", perEntry)),"entries":\#(state.entryCount)}"#
        ))
}

/// A restarted worker's backlog: 6,250 users (a partition's share of 100,000) with `history`
/// earlier notifications each (half of them read, the rest unread, every other one matching the
/// Work predicate), decided under one context, committed and restored from the changelog; then 3
/// new notifications a user under the same context, timed, with a commit every 2,048. Returns
/// nanoseconds per record, the unread entries looked at again to recount a badge, and then the
/// changelog bytes per user of a context change (``contextChangeBytes(_:_:)``).
func restartBacklog(history: Int, context: CompiledFocusContext) -> (
    nanoseconds: Double, recounted: Int, contextChangeBytes: Double
) {
    let users = (0..<6_250).map { "user-\($0)" }
    let now: Int64 = 1_795_000_000_000
    var state = PartitionState()
    var log: [([UInt8], [UInt8]?)] = []
    for round in 0..<history {
        for user in users {
            _ = state.apply(
                NotificationEvent(
                    id: "h-\(round)", userID: user, appID: "com.example.chat",
                    filterCriteria: round % 4 < 2 ? "work" : "home"),
                lookup: .available(context), nowMilliseconds: now
            )
            if round % 2 == 1 {
                _ = state.apply(
                    NotificationEvent(
                        kind: .read, id: "r", userID: user, appID: "com.example.chat",
                        notificationIDs: ["h-\(round)"]),
                    lookup: .available(context), nowMilliseconds: now
                )
            }
        }
        state.writeChanges { key, value in log.append((key, value)) }
        state.commit()
    }
    var restored = PartitionState()
    for (key, value) in log { try! restored.restore(key: key, value: value) }
    restored.finishRestore()
    let backlog = (0..<3).flatMap { round in
        users.map {
            NotificationEvent(id: "b-\(round)", userID: $0, appID: "com.example.chat", filterCriteria: "work")
        }
    }
    var sink = 0
    let started = ContinuousClock.now
    for (index, event) in backlog.enumerated() {
        if case .applied(let update) = restored.apply(event, lookup: .available(context), nowMilliseconds: now)
            .admission, update != nil
        {
            sink &+= 1
        }
        if index % 2048 == 2047 {
            restored.writeChanges { _, value in sink &+= value?.count ?? 0 }
            restored.commit()
        }
    }
    let seconds = (ContinuousClock.now - started) / .seconds(1)
    precondition(sink != 42, "keeps the work")
    restored.writeChanges { _, _ in }
    restored.commit()
    return (seconds / Double(backlog.count) * 1e9, restored.recountedEntries, contextChangeBytes(&restored, users))
}

/// Changelog bytes per user of a context change that makes every unread notification count
/// (the badges recounted, what changed written).
func contextChangeBytes(_ state: inout PartitionState, _ users: [String]) -> Double {
    var compiler = FocusContextCompiler()
    let everything = try! compiler.compile(
        FocusContext(
            userID: "u", version: 8, focus: "Work",
            apps: ["com.example.chat": .init(filterPredicate: "TRUEPREDICATE")]))
    for user in users { _ = state.recompute(userID: user, context: everything, nowMilliseconds: 1_795_000_000_000) }
    var bytes = 0
    state.writeChanges { key, value in bytes += key.count + (value?.count ?? 0) }
    state.commit()
    return Double(bytes) / Double(users.count)
}

/// ``restartBacklog(history:context:)`` with 1 and with 50 earlier notifications a user, in
/// alternating rounds; the median ratio of the rates.
@MainActor func restartBacklogBenchmark(rounds: Int = 5) {
    var compiler = FocusContextCompiler()
    let context = try! compiler.compile(
        FocusContext(
            userID: "u", version: 7, focus: "Work",
            apps: ["com.example.chat": .init(filterPredicate: "SELF IN {'work', 'urgent'}")]))
    var few: [Double] = []
    var many: [Double] = []
    var recounted = (few: 0, many: 0)
    var changeBytes = (few: 0.0, many: 0.0)
    for round in 0..<rounds {
        for history in round % 2 == 0 ? [1, 50] : [50, 1] {
            let (nanoseconds, looked, bytes) = restartBacklog(history: history, context: context)
            if history == 1 {
                few.append(nanoseconds)
                recounted.few = looked
                changeBytes.few = bytes
            } else {
                many.append(nanoseconds)
                recounted.many = looked
                changeBytes.many = bytes
            }
        }
    }
    let ratios = zip(few, many).map { $0 / $1 }.sorted()
    let median = ratios[ratios.count / 2]
    rows.append(
        (
            "restored partition state, backlog of 3 a user: rate with 50 earlier notifications ÷ with 1 (median of \(rounds) alternating rounds, range); ns per record; entries recounted; changelog bytes per user of a context change that makes every unread count",
            String(
                format: "%.2f (%.2f–%.2f); %.0f / %.0f ns; %d / %d; %.0f / %.0f B", median, ratios.first!,
                ratios.last!, few.sorted()[few.count / 2], many.sorted()[many.count / 2], recounted.few,
                recounted.many, changeBytes.few, changeBytes.many),
            #"{"benchmark":"state-restart-backlog","ratio":\#(String(format: "%.3f", median)),"ns_1":\#(String(format: "%.1f", few.sorted()[few.count / 2])),"ns_50":\#(String(format: "%.1f", many.sorted()[many.count / 2])),"recounted_50":\#(recounted.many),"context_change_bytes_50":\#(String(format: "%.0f", changeBytes.many))}"#
        ))
}

// MARK: - Ids chosen to collide in the entry table

/// Where the entry table put a user's id before it was seeded, as anyone could compute it: the
/// id's 64-bit FNV-1a hash (the one the changelog keys hold) mixed with the user's number.
func unseededSlot(id: String, userNumber: UInt32) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in id.utf8 {
        hash ^= UInt64(byte)
        hash &*= 0x0000_0100_0000_01b3
    }
    var mixed = hash ^ (UInt64(userNumber) &* 0x9E37_79B9_7F4A_7C15)
    mixed ^= mixed >> 33
    mixed &*= 0xFF51_AFD7_ED55_8CCD
    mixed ^= mixed >> 33
    return mixed
}

/// One user's notifications, `count` ids that all shared one slot of any table of up to 8,192
/// slots before the table was seeded, against `count` ordinary ids: the rate of each (the
/// crafted ones after the ordinary ones, five fresh states each, the fastest kept).
@MainActor func collidingIDsBenchmark(count: Int = 20_000) {
    var crafted: [String] = []
    var candidate = 0
    while crafted.count < count {
        let id = "x-\(candidate)"
        if unseededSlot(id: id, userNumber: 0) & 8191 == 0 { crafted.append(id) }
        candidate += 1
    }
    let ordinary = (0..<count).map { "n-\($0)" }
    func nanoseconds(_ ids: [String]) -> Double {
        var best = Double.infinity
        for _ in 0..<5 {
            var state = PartitionState()
            let started = ContinuousClock.now
            for id in ids {
                _ = state.apply(
                    NotificationEvent(id: id, userID: "user-0", appID: "com.example.chat", filterCriteria: "work"),
                    lookup: .available(nil), nowMilliseconds: 0
                )
            }
            best = min(best, (ContinuousClock.now - started) / .seconds(1) / Double(ids.count) * 1e9)
        }
        return best
    }
    let plain = nanoseconds(ordinary)
    let colliding = nanoseconds(crafted)
    rows.append(
        (
            "one user's \(count) ids chosen to share a slot of the unseeded entry table ÷ ordinary ids (rate)",
            String(format: "%.2f (%.0f ns vs %.0f ns a notification)", plain / colliding, colliding, plain),
            #"{"benchmark":"state-colliding-ids","ratio":\#(String(format: "%.3f", plain / colliding)),"ns_colliding":\#(String(format: "%.1f", colliding)),"ns_ordinary":\#(String(format: "%.1f", plain))}"#
        ))
}

// MARK: - Rollback

/// A state of `users` users, each with a notification that named a sender and counted in a
/// rate window, and a Focus timer; then, 20 times: 2,000 changes to 1,000 distinct users, two
/// each (notifications naming senders, counted in rate windows, moving users' timers), and a
/// rollback. Returns nanoseconds per
/// rollback and per round of changes.
func rollbackNanoseconds(users: Int) -> (rollback: Double, changes: Double) {
    let limits = RateLimitPolicy(FocusContext.RateLimits(perUser: .init(max: 1_000, windowSeconds: 3_600)))
    let now: Int64 = 1_795_000_000_000
    var state = PartitionState()
    for user in 0..<users {
        _ = state.apply(
            NotificationEvent(
                id: "h", userID: "user-\(user)", appID: "com.example.chat", filterCriteria: "work",
                senderID: "sender-\(user % 97)"),
            lookup: .available(nil), nowMilliseconds: now, defaultRateLimits: limits
        )
        state.watchTransition(userID: "user-\(user)", at: now + 3_600_000 + Int64(user))
    }
    state.writeChanges { _, _ in }
    state.commit()
    var random = SplitMix(state: 11)
    var total = Duration.zero
    var changing = Duration.zero
    for round in 0..<20 {
        // The same changes whatever the state's size: 1,000 distinct users, each changed twice.
        var picked = Set<Int>(minimumCapacity: 1_000)
        while picked.count < min(1_000, users) { picked.insert(Int(random.next() % UInt64(users))) }
        let changed = Array(picked).shuffled(using: &random)
        let changesStarted = ContinuousClock.now
        for change in 0..<2_000 {
            let user = changed[change % changed.count]
            if change % 4 == 0 {
                state.watchTransition(userID: "user-\(user)", at: now + Int64(random.next() % 1_000_000))
            } else {
                _ = state.apply(
                    NotificationEvent(
                        id: "r\(round)-\(change)", userID: "user-\(user)", appID: "com.example.chat",
                        filterCriteria: "work", senderID: "sender-\(change % 89)"),
                    lookup: .available(nil), nowMilliseconds: now, defaultRateLimits: limits
                )
            }
        }
        let started = ContinuousClock.now
        changing += started - changesStarted
        state.rollback()
        total += ContinuousClock.now - started
    }
    return (total / .nanoseconds(1) / 20, changing / .nanoseconds(1) / 20)
}

/// ``rollbackNanoseconds(users:)`` with 1,000 and with 1,000,000 users.
@MainActor func rollbackBenchmark() {
    // One size alone, for a profiler (`ROLLBACK_USERS=1000000 valgrind --tool=callgrind …`).
    if let users = ProcessInfo.processInfo.environment["ROLLBACK_USERS"].flatMap(Int.init) {
        let one = rollbackNanoseconds(users: users)
        rows.append(
            (
                "rollback of 2,000 changes with \(users) users; making the changes",
                String(format: "%.0f µs; %.0f µs", one.rollback / 1_000, one.changes / 1_000),
                #"{"benchmark":"state-rollback-one","users":\#(users),"us_rollback":\#(String(format: "%.1f", one.rollback / 1_000)),"us_changes":\#(String(format: "%.1f", one.changes / 1_000))}"#
            ))
        return
    }
    let few = rollbackNanoseconds(users: 1_000)
    let many = rollbackNanoseconds(users: 1_000_000)
    rows.append(
        (
            "rollback of 2,000 changes (senders, rate windows, timers): 1,000,000 users ÷ 1,000 users (time); making the changes, the same",
            String(
                format: "%.2f (%.0f µs vs %.0f µs); %.2f (%.0f µs vs %.0f µs)", many.rollback / few.rollback,
                many.rollback / 1_000, few.rollback / 1_000, many.changes / few.changes, many.changes / 1_000,
                few.changes / 1_000),
            #"{"benchmark":"state-rollback","ratio":\#(String(format: "%.3f", many.rollback / few.rollback)),"us_1000":\#(String(format: "%.1f", few.rollback / 1_000)),"us_1000000":\#(String(format: "%.1f", many.rollback / 1_000)),"changes_ratio":\#(String(format: "%.3f", many.changes / few.changes))}"#
        ))
}
