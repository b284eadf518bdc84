// The retention over a month of traffic compressed: users come and go, and the state and its
// compacted changelog must stay flat once the retention has passed.

import FocusGateCore
import Foundation

/// A compacted changelog as Kafka would leave it: the newest value of each key, tombstones
/// removing theirs.
struct CompactedChangelog {
    private(set) var live: [[UInt8]: Int] = [:]
    private(set) var bytes = 0

    mutating func write(key: [UInt8], value: [UInt8]?) {
        if let old = self.live[key] { self.bytes -= key.count + old }
        if let value {
            self.live[key] = value.count
            self.bytes += key.count + value.count
        } else {
            self.live[key] = nil
        }
    }
}

/// A month of days compressed: each day a new cohort of `cohort` users arrives and sends
/// `perDay` notifications a user a day (half of them read later that day) for `activeDays`
/// days, then goes quiet for good. The retention is `retentionDays`; the sweep runs as the
/// worker runs it, in steps of 2,000 users, 24 rounds a day. Printed every 5 days: users,
/// remembered notifications, the process's resident memory, and the compacted changelog.
@MainActor func retentionMonthBenchmark(
    days: Int = 30, cohort: Int = 10_000, perDay: Int = 3, activeDays: Int = 3, retentionDays: Int = 7
) {
    let day: Int64 = 86_400_000
    let start: Int64 = 1_800_000_000_000
    var state = PartitionState()
    var changelog = CompactedChangelog()
    var pendingReads: [(user: String, id: String)] = []
    var processed = 0
    var sweepTime = Duration.zero
    var looks = 0
    func commit(_ state: inout PartitionState, _ changelog: inout CompactedChangelog) {
        state.writeChanges { key, value in changelog.write(key: key, value: value) }
        state.commit()
    }
    var lines: [String] = []
    for dayNumber in 0..<days {
        let firstCohort = max(0, dayNumber - activeDays + 1)
        for hour in 0..<24 {
            let now = start + Int64(dayNumber) * day + Int64(hour) * day / 24
            // The active cohorts' notifications of this hour, spread over the day's hours.
            for cohortNumber in firstCohort...dayNumber {
                for user in 0..<cohort where (user + hour) % (24 / perDay) == 0 {
                    let userID = "user-\(cohortNumber)-\(user)"
                    let id = "n-\(dayNumber)-\(hour)-\(user)"
                    _ = state.apply(
                        NotificationEvent(
                            id: id, userID: userID, appID: "com.example.chat", filterCriteria: "work"),
                        lookup: .available(nil), nowMilliseconds: now
                    )
                    if user % 2 == 0 { pendingReads.append((userID, id)) }
                    processed += 1
                    if processed % 2_048 == 0 { commit(&state, &changelog) }
                }
            }
            // The day's reads come some hours later.
            if hour == 20 {
                for read in pendingReads {
                    _ = state.apply(
                        NotificationEvent(
                            kind: .read, id: "r", userID: read.user, appID: "com.example.chat",
                            notificationIDs: [read.id]),
                        lookup: .available(nil), nowMilliseconds: now
                    )
                    processed += 1
                    if processed % 2_048 == 0 { commit(&state, &changelog) }
                }
                pendingReads.removeAll(keepingCapacity: true)
            }
            // The sweep: a pass over every user each hour, in the worker's steps of 2,000.
            let sweepStarted = ContinuousClock.now
            let cutoff = now - Int64(retentionDays) * day
            var looked = 0
            repeat {
                for user in state.usersToExpire(before: cutoff, examining: 2_000) {
                    _ = state.expire(userID: user, context: nil, nowMilliseconds: now, before: cutoff)
                }
                looked += 2_000
            } while looked < state.userCount + 2_000
            looks += looked
            commit(&state, &changelog)
            sweepTime += ContinuousClock.now - sweepStarted
        }
        if (dayNumber + 1) % 5 == 0 {
            lines.append(
                String(
                    format:
                        "day %2d: %7d users, %8d notifications remembered, %6.1f MB resident (the state and this benchmark's changelog), changelog %8d live keys, %6.1f MB",
                    dayNumber + 1, state.userCount, state.entryCount, Double(heapInUse()) / 1e6, changelog.live.count,
                    Double(changelog.bytes) / 1e6))
        }
    }
    for line in lines { print(line) }
    rows.append(
        (
            "a month compressed (\(cohort) new users a day, each active \(activeDays) days, retention \(retentionDays) days): users, remembered notifications and the compacted changelog at days 10, 20, 30; the sweep's time per user looked at, forgetting and its commits included",
            lines.filter { $0.hasPrefix("day 10") || $0.hasPrefix("day 20") || $0.hasPrefix("day 30") }
                .joined(separator: "; ")
                + String(format: "; sweep %.0f ns per user looked at", sweepTime / .nanoseconds(1) / Double(looks)),
            #"{"benchmark":"state-retention-month","users":\#(state.userCount),"entries":\#(state.entryCount),"changelog_keys":\#(changelog.live.count),"changelog_bytes":\#(changelog.bytes),"forgotten_users":\#(state.forgottenUsers)}"#
        ))
}
