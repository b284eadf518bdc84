import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import FocusGateThreads
import Foundation

// MARK: - A mass Focus transition, end to end

/// `GatewayBenchmark transition`: every user (100,000) has a daily Sleep in Paris that starts at
/// the same minute, about two and a half minutes after the start, and state in the gateway (history
/// in the changelog, then one notification each, which also sets the user's timer). Notifications
/// flow at `TRANSITION_RATE` per second (default 5,000) from 15 s before the instant to 45 s
/// after it, each stamped when produced and read back from the outputs, through one
/// `focusgate serve` at-least-once with `TRANSITION_WORKERS` workers (default 1). Reported:
/// notification latency (p50, p99, max) before the instant and in the 15 s after it; how late the
/// timers fired (from the gateway's `focusgate_timer_lateness_seconds`); and when each user's new
/// status (focused) was readable on `focus.status`, the last of a transition's outputs (badges
/// first, then status, in each commit), counted from the instant. Aborted commits and context
/// loads that failed are reported too: either makes timers fire again. The wait before the
/// instant paces the run; it is not a wait for a condition.
func massTransitionBenchmark() async throws -> (name: String, value: String, json: String) {
    let paris = ZoneClock(identifier: "Europe/Paris")!
    let minute: Int64 = 60_000
    let now = wallMicros() / 1_000
    let startLocal = (paris.local(now + 150_000) / minute + 1) * minute
    let instant = paris.instant(ofLocal: startLocal)
    func time(_ local: Int64) -> FocusContext.LocalTime {
        FocusContext.LocalTime(String(format: "%02d:%02d", local / 3_600_000 % 24, local / minute % 60))!
    }
    try await store.bulkInsertForBenchmark(
        (0..<users).map { index in
            FocusContext(
                userID: "u-\(index)", version: 1, timeZone: "Europe/Paris",
                foci: ["Sleep": .init(hideBadges: true, otherApps: .silence)],
                schedules: [
                    .init(
                        focus: "Sleep", days: FocusContext.Weekday.allCases, start: time(startLocal),
                        end: time(startLocal + 60 * minute))
                ])
        })
    let topic = "bench-transition"
    try broker.createTopic(.init(name: topic, partitions: partitions))
    let workers = Int(ProcessInfo.processInfo.environment["TRANSITION_WORKERS"] ?? "") ?? 1
    let instance = try await Instance(try settings(.atLeastOnce, input: topic, workers: workers))
    while await instance.metric("focusgate_assigned_partitions") < Double(partitions) {
        try await Task.sleep(for: .milliseconds(50))
    }
    // Every user once: contexts cached, and each user's timer set for the instant.
    try await DedicatedThread.run(name: "producer") { try produce(topic: topic, range: 0..<warmup) }
    while await instance.consumed < warmup { try await Task.sleep(for: progressInterval) }
    let pending = await instance.metric("focusgate_timers_pending")
    let lead = instant - wallMicros() / 1_000 - 15_000
    log("\(Int(pending)) timers pending; the transition comes in \(lead / 1_000 + 15) s")
    precondition(lead > 0, "the warm-up ran past the start of the measurement; start the benchmark again")
    try await Task.sleep(for: .milliseconds(lead))

    let offered = Double(ProcessInfo.processInfo.environment["TRANSITION_RATE"] ?? "") ?? 5_000
    let statusReady = Flag()
    let statusReader = Task {
        try await DedicatedThread.run(name: "status-reader") {
            try readStatusTimes(expected: Int(pending), seconds: 60, ready: statusReady)
        }
    }
    while !statusReady.isSet { try await Task.sleep(for: .milliseconds(10)) }
    let outputsBefore = await (
        instance.metric("focusgate_badge_updates_total"), instance.metric("focusgate_state_records_total")
    )
    let read = try await offerAndRead(topic: topic, offered: offered, seconds: 60)
    let statusRecords = try await statusReader.value
    let statusTimes = statusRecords.map { Double($0.readAt - instant * 1_000) / 1_000 }.sorted()
    let statusProduced = statusRecords.map { Double($0.producedAt - instant) }.sorted()
    let samples = await instance.serve.metrics()
    let loadFailures = await instance.metric("focusgate_context_load_failures_total")
    await instance.stop()
    // Badge updates and changelog records of the measured minute: what the transition costs in output.
    let badgeUpdates = (samples["focusgate_badge_updates_total"] ?? 0) - outputsBefore.0
    let stateRecords = (samples["focusgate_state_records_total"] ?? 0) - outputsBefore.1

    let micros = instant * 1_000
    let before = read.filter { $0.sentAt < micros }.map(\.ms).sorted()
    let during = read.filter { $0.sentAt >= micros && $0.sentAt < micros + 15_000_000 }.map(\.ms).sorted()
    // The lateness histogram: how many timers fired within each bound.
    let fired = samples["focusgate_timers_fired_total"] ?? 0
    let count = samples["focusgate_timer_lateness_seconds_count"] ?? 0
    let withinOne = samples[#"focusgate_timer_lateness_seconds_bucket{le="1.0"}"#] ?? 0
    let bounds = samples.compactMap { key, value -> (Double, Double)? in
        guard key.hasPrefix("focusgate_timer_lateness_seconds_bucket{le=\""),
            let bound = Double(key.dropFirst("focusgate_timer_lateness_seconds_bucket{le=\"".count).dropLast(2))
        else { return nil }
        return (bound, value)
    }.sorted { $0.0 < $1.0 }
    let allWithin = bounds.first { $0.1 >= count }?.0 ?? .infinity
    func describe(_ values: [Double]) -> String {
        String(
            format: "p50 %.1f ms · p99 %.1f ms · max %.1f ms (%d)", percentile(values, 0.5), percentile(values, 0.99),
            values.last ?? .nan, values.count)
    }
    let aborted = samples[#"focusgate_transactions_total{result="aborted"}"#] ?? 0
    let statusLast = statusTimes.last ?? .nan
    let statusWithinOne = statusTimes.filter { $0 <= 1_000 }.count
    return (
        "mass transition: \(users) users' Sleep starts in the same minute while \(format(offered)) notifications/s flow, at-least-once, \(workers) worker(s)",
        "before: \(describe(before)); the 15 s after: \(describe(during)); timers fired \(Int(fired)), "
            + String(format: "%.1f%% within 1 s, all within %.2f s", count > 0 ? withinOne / count * 100 : 0, allWithin)
            + "; status produced after the instant: \(describe(statusProduced))"
            + "; status readable after the instant: \(describe(statusTimes)), \(statusWithinOne) within 1 s"
            + "; aborted commits \(Int(aborted)), context loads failed \(Int(loadFailures))"
            + "; in the measured minute \(Int(badgeUpdates)) badge updates and \(Int(stateRecords)) changelog records",
        #"{"benchmark":"mass-transition","users":\#(users),"offered_per_s":\#(format(offered)),"timers_pending":\#(Int(pending)),"timers_fired":\#(Int(fired)),"within_1s":\#(Int(withinOne)),"all_within_s":\#(allWithin),"before_p99_ms":\#(String(format: "%.2f", percentile(before, 0.99))),"during_p50_ms":\#(String(format: "%.2f", percentile(during, 0.5))),"during_p99_ms":\#(String(format: "%.2f", percentile(during, 0.99))),"during_max_ms":\#(String(format: "%.2f", during.last ?? .nan)),"status_read":\#(statusTimes.count),"status_produced_p50_ms":\#(String(format: "%.1f", percentile(statusProduced, 0.5))),"status_produced_last_ms":\#(String(format: "%.1f", statusProduced.last ?? .nan)),"status_p50_ms":\#(String(format: "%.1f", percentile(statusTimes, 0.5))),"status_p99_ms":\#(String(format: "%.1f", percentile(statusTimes, 0.99))),"status_last_ms":\#(String(format: "%.1f", statusLast)),"aborted":\#(Int(aborted)),"load_failures":\#(Int(loadFailures)),"badge_updates":\#(Int(badgeUpdates)),"state_records":\#(Int(stateRecords))}"#
    )
}

/// Reads `focus.status` from its current ends until `expected` records arrived or `seconds` (plus
/// a margin) passed; returns, for each focused status, when the gateway produced it (its record
/// timestamp, wall ms) and when it was read (wall µs). Call before the instant; `ready` is set
/// once the reader is positioned.
func readStatusTimes(expected: Int, seconds: Double, ready: Flag) throws -> [(producedAt: Int64, readAt: Int64)] {
    let consumer = try tailReader(of: [TopicNames().status])
    ready.set()
    var times: [(producedAt: Int64, readAt: Int64)] = []
    let focused = Array(#""focused":true"#.utf8)
    let deadline = ContinuousClock.now + .seconds(seconds + 20)
    while times.count < expected && ContinuousClock.now < deadline {
        consumer.consumeBatch(maxRecords: 4096, timeout: .milliseconds(10)) { batch in
            let now = wallMicros()
            for record in batch where record.value?.firstRange(of: focused) != nil {
                times.append((record.timestamp ?? 0, now))
            }
        }
    }
    return times
}
