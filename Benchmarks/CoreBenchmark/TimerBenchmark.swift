import BenchmarkSupport
import FocusGateCore
import Foundation

// MARK: - Timers: memory per user, and a mass transition while notifications flow

/// `CoreBenchmark timers`: 1,000,000 users in one partition state, each with one unread
/// notification, under a context without schedules and then under one with a daily Sleep
/// schedule in Paris (22:00–07:00): the resident bytes the timers add per user. Then the
/// record loop as a worker runs it while 100,000 of those users' Sleep starts in the same
/// minute: turns of 2,048 notifications (Zipf-drawn users) and at most 1,000 fired timers
/// (`timers.maxFiredPerBatch`), each a badge recompute. Reported: how late the last transition
/// fired, and the turn times (a notification waits at most one turn).
@MainActor func timerBenchmark(users: Int = 1_000_000, switching: Int = 100_000) {
    var compiler = FocusContextCompiler()
    // Tuesday 2026-11-24 20:59:00Z is 21:59 in Paris: Sleep starts a minute later.
    let start: Int64 = 1_795_985_940_000
    let plain = try! compiler.compile(FocusContext(userID: "u", version: 1))  // no Focus: no timer, no status
    let scheduled = try! compiler.compile(
        FocusContext(
            userID: "u", version: 1, timeZone: "Europe/Paris",
            foci: ["Sleep": .init(hideBadges: true, otherApps: .silence)],
            schedules: [
                .init(
                    focus: "Sleep", days: FocusContext.Weekday.allCases, start: .init("22:00")!, end: .init("07:00")!)
            ]),
        horizonFrom: start)
    let ids = (0..<users).map { "user-\($0)" }
    func fill(_ context: (Int) -> CompiledFocusContext) -> PartitionState {
        var state = PartitionState()
        for (index, id) in ids.enumerated() {
            _ = state.decide(
                NotificationEvent(id: "n-\(index)", userID: id, appID: "com.example.chat"),
                lookup: .available(context(index)), defaultRateLimits: .none, repeatedWindowMilliseconds: 180_000,
                nowMilliseconds: start, sentAtMilliseconds: start)
            if index % 4096 == 0 {
                state.writeChanges { _, _ in }
                state.commit()
            }
        }
        state.writeChanges { _, _ in }
        state.commit()
        return state
    }
    let before = heapInUse()
    // Kept alive across the measurement: the optimizer may end a value's lifetime at its last use.
    let withoutBytes = withExtendedLifetime(fill { _ in plain }) { heapInUse() - before }
    let cleared = heapInUse()
    // The first `switching` users have the schedule; all of them have a timer at 21:00Z.
    var state = fill { $0 < switching ? scheduled : plain }
    let withSwitchingBytes = heapInUse() - cleared
    let timerBytes = Double(withSwitchingBytes - withoutBytes) / Double(switching)

    // The mass transition: Sleep starts for 100,000 users at 21:00Z while notifications flow.
    let transition: Int64 = 1_795_986_000_000
    var random = SplitMix(state: 11)
    let zipf = Zipf(count: users, exponent: 1)
    var turnTimes: [Double] = []
    var fired = 0
    var latest: Int64 = 0
    let began = ContinuousClock.now
    var turn = 0
    while fired < switching {
        let turnStart = ContinuousClock.now
        // Simulated wall clock: the transition instant plus the real time spent since.
        let now = transition + Int64((ContinuousClock.now - began) / .milliseconds(1))
        for _ in 0..<2_048 {
            let user = zipf.sample(&random)
            turn += 1
            _ = state.decide(
                NotificationEvent(id: "m-\(turn)", userID: ids[user], appID: "com.example.chat"),
                lookup: .available(user < switching ? scheduled : plain), defaultRateLimits: .none,
                repeatedWindowMilliseconds: 180_000, nowMilliseconds: now, sentAtMilliseconds: now)
        }
        for (userID, _) in state.dueTransitions(atMilliseconds: now, limit: 1_000) {
            _ = state.recompute(userID: userID, context: scheduled, nowMilliseconds: now)
            fired += 1
        }
        state.writeChanges { _, _ in }
        state.commit()
        latest = now - transition
        turnTimes.append(Double((ContinuousClock.now - turnStart) / .microseconds(1)) / 1000)
    }
    let lastFired = Double((ContinuousClock.now - began) / .milliseconds(1)) / 1000
    turnTimes.sort()
    let p99 = turnTimes[min(turnTimes.count - 1, turnTimes.count * 99 / 100)]
    let p50 = turnTimes[turnTimes.count / 2]
    rows.append(
        (
            "timers: resident bytes per user with a schedule (1,000,000 users); a mass transition of 100,000 users while notifications flow",
            String(
                format:
                    "%.0f B per user; last transition fired %.3f s after its instant (goal ≤ 1 s); %d turns of 2,048 notifications + ≤ 1,000 timers, turn time p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                timerBytes, lastFired, turnTimes.count, p50, p99, turnTimes.last ?? 0),
            #"{"benchmark":"timers","users":\#(users),"switching":\#(switching),"timer_bytes_per_user":\#(String(format: "%.1f", timerBytes)),"last_transition_seconds":\#(String(format: "%.3f", lastFired)),"turns":\#(turnTimes.count),"turn_p50_ms":\#(String(format: "%.2f", p50)),"turn_p99_ms":\#(String(format: "%.2f", p99)),"pending_after":\#(state.pendingTransitions),"simulated_lateness_ms":\#(latest)}"#
        ))
}
