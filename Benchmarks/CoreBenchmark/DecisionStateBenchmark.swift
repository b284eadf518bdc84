import BenchmarkSupport
import FocusGateCore
import Foundation

// MARK: - Deciding with the partition state: people lists and rate limits against neither

/// What a worker does per notification after decoding (``PartitionState/decide(_:lookup:defaultRateLimits:repeatedWindowMilliseconds:nowMilliseconds:sentAtMilliseconds:)``:
/// repeated-sender check, Focus rules, rate limits, state update) for a partition's 6,250 users
/// drawn from a Zipf distribution (s = 1), notifications from 40 senders 50 ms apart by record
/// timestamp, a commit every 2,048 records. Three contexts: a Focus with an app predicate and
/// nothing else; the same with 5,000 allowed and 5,000 silenced people and repeated senders; the
/// same with rate limits on (20 per user per hour, 5 per app per 10 minutes); the first with
/// summaries on (a silenced notification keeps what a summary lists of it). Each runs 400,000
/// records first, so the windows, sender rings and dedupe windows are at steady state.
///
/// Wall-clock ratios vary by ±20% here; for instruction counts run one variant at a time under
/// callgrind: `ONLY=0|1|2|3 RECORDS=200000 valgrind --tool=callgrind
/// --toggle-collect='$s13FocusGateCore14PartitionStateV6decide*' .build/release/CoreBenchmark limits`.
@MainActor func peopleAndLimitsBenchmark(
    records: Int = ProcessInfo.processInfo.environment["RECORDS"].flatMap(Int.init) ?? 1_000_000
) {
    let users = (0..<6_250).map { "user-\($0)" }
    let apps = ["com.example.chat", "com.example.mail", "com.example.news"]
    var compiler = FocusContextCompiler()
    let filters: [String: FocusContext.AppFilter] = [
        "com.example.chat": .init(filterPredicate: "SELF IN {'work', 'urgent'}"),
        "com.example.news": .init(silenced: true),
    ]
    let people = FocusContext.People(
        allowed: (0..<5_000).map { "contact-\($0)-allowed" } + ["sender-7"],
        silenced: (0..<5_000).map { "contact-\($0)-muted" } + ["sender-13"], allowRepeated: true)
    let limits = FocusContext.RateLimits(
        perUser: .init(max: 20, windowSeconds: 3600), perApp: .init(max: 5, windowSeconds: 600))
    let variants: [(name: String, context: CompiledFocusContext)] = [
        (
            "Focus rules only",
            try! compiler.compile(FocusContext(userID: "u", version: 1, focus: "Work", apps: filters))
        ),
        (
            "5,000 + 5,000 people, repeated senders",
            try! compiler.compile(FocusContext(userID: "u", version: 1, focus: "Work", apps: filters, people: people))
        ),
        (
            "people and rate limits (20/h per user, 5/10 min per app)",
            try! compiler.compile(
                FocusContext(userID: "u", version: 1, focus: "Work", apps: filters, people: people, rateLimits: limits))
        ),
        (
            "Focus rules only, with summaries (each silenced notification keeps its summary item)",
            try! compiler.compile(
                FocusContext(userID: "u", version: 1, focus: "Work", apps: filters, summaries: .init()))
        ),
    ]
    // Events built before timing: the benchmark measures deciding, not string formatting.
    var random = SplitMix(state: 7)
    let zipf = Zipf(count: users.count, exponent: 1)
    let events: [NotificationEvent] = (0..<records).map { index in
        NotificationEvent(
            id: "n-\(index)", userID: users[zipf.sample(&random)], appID: apps[Int(random.next() % 3)],
            filterCriteria: ["work", "home", "urgent"][Int(random.next() % 3)],
            interruptionLevel: random.next() % 50 == 0 ? .timeSensitive : .active,
            senderID: "sender-\(random.next() % 40)")
    }
    let start: Int64 = 1_800_000_000_000
    var rates: [Double] = []
    var limited: [Int] = []
    var bytes: [Double] = []
    let only = ProcessInfo.processInfo.environment["ONLY"].flatMap(Int.init)
    for (number, variant) in variants.enumerated() where only == nil || only == number {
        var state = PartitionState()
        let lookup = ContextLookup.available(variant.context)
        var position = 0
        var rateLimited = 0
        var changelogBytes = 0
        let decide = { (state: inout PartitionState) -> Int in
            let event = events[position % events.count]
            let sentAt = start + Int64(position) * 50
            position += 1
            let (decision, _) = state.decide(
                event, lookup: lookup, defaultRateLimits: .none, repeatedWindowMilliseconds: 180_000,
                nowMilliseconds: sentAt, sentAtMilliseconds: sentAt, sourceOffset: Int64(position))
            if decision?.reason == .rateLimited { rateLimited += 1 }
            if position % 2048 == 0 {
                // As the gateway writes them: each record with the commit's as-of offset and the
                // commit's time as its timestamp.
                state.writeChanges(asOf: Int64(position) + 1, writtenAt: sentAt) { key, value in
                    changelogBytes += key.count + (value?.count ?? 0)
                }
                state.commit()
            }
            return decision?.outcome == .delivered ? 1 : 0
        }
        for _ in 0..<400_000 { _ = decide(&state) }
        rateLimited = 0
        changelogBytes = 0
        let measuredFrom = position
        rates.append(
            measure("decide with the partition state, \(variant.name)", iterations: records) { decide(&state) })
        let measured = position - measuredFrom
        limited.append(rateLimited * 100 / max(1, measured))
        bytes.append(Double(changelogBytes) / Double(max(1, measured)))
    }
    if only != nil { return }
    rows.append(
        (
            "decide with the partition state: rate with 5,000-person lists / without; with rate limits / without (lists in both) (goal ≥ 0.9 each)",
            String(
                format: "%.3f; %.3f (%d%% rate-limited; changelog %.1f, %.1f, %.1f B per record)", rates[1] / rates[0],
                rates[2] / rates[1], limited[2], bytes[0], bytes[1], bytes[2]),
            #"{"benchmark":"people-limits-ratio","people":\#(String(format: "%.3f", rates[1] / rates[0])),"limits":\#(String(format: "%.3f", rates[2] / rates[1])),"rate_limited_percent":\#(limited[2]),"changelog_bytes_per_record":[\#(bytes.map { String(format: "%.1f", $0) }.joined(separator: ","))]}"#
        ))
    rows.append(
        (
            "decide with the partition state: rate with summaries / without (Focus rules only)",
            String(
                format: "%.3f (changelog %.1f B per record with, %.1f without)", rates[3] / rates[0], bytes[3], bytes[0]
            ),
            #"{"benchmark":"summaries-ratio","ratio":\#(String(format: "%.3f", rates[3] / rates[0])),"changelog_bytes_per_record":\#(String(format: "%.1f", bytes[3]))}"#
        ))
}
