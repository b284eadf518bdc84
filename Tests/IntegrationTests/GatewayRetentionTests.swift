import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

extension GatewayScenarioTests {
    /// The retention through the gateway: quiet users' badges fall to 0, their state keys get
    /// tombstones, and a restart restores none of them.
    @Suite("Retention through the gateway")
    struct GatewayRetentionTests {
        static let quiet = (0..<12).map { String(format: "quiet-%02d", $0) }

        /// The newest record of each key of `topic` (the state changelog), as compaction keeps it.
        static func newestByKey(_ bench: GatewayBench, _ topic: String) throws -> [[UInt8]: [UInt8]?] {
            var newest: [[UInt8]: [UInt8]?] = [:]
            for record in try bench.readAll(topic).sorted(by: { ($0.partition, $0.offset) < ($1.partition, $1.offset) })
            {
                guard let key = record.key else { continue }
                newest[key] = record.value
            }
            return newest
        }

        @Test(
            "with a short retention quiet users' badges fall to 0, their keys get tombstones, a restart restores none")
        func quietUsersForgotten() async throws {
            let bench = try await GatewayBench()
            let clock = ManualWallClock()
            var configuration = bench.configuration()
            configuration.clock = clock
            configuration.stateRetentionMilliseconds = 60_000
            configuration.retentionSweepInterval = .milliseconds(50)
            let instance = try await InProcessGateway(bench, configuration: configuration)
            let badges = bench.topics.badges

            // Everyone gets two notifications (two apps); then only "active" gets another, 30 s later.
            try bench.send(
                (Self.quiet + ["active"]).flatMap {
                    [Events.notification("n-1", user: $0), Events.notification("n-2", user: $0, app: "mail")]
                })
            for user in Self.quiet + ["active"] {
                _ = try await GatewayScheduleTests.latest(bench, badges, key: "\(user)/mail") {
                    $0["badge"] as? Int == 1
                }
            }
            clock.advance(by: .seconds(30))
            try bench.send([Events.notification("n-3", user: "active")])
            _ = try await GatewayScheduleTests.latest(bench, badges, key: "active/chat") { $0["badge"] as? Int == 2 }

            // 70 s after the first ones: they are past the retention, "active"'s n-3 is not.
            clock.advance(by: .seconds(40))
            for user in Self.quiet {
                for app in ["chat", "mail"] {
                    let last = try await GatewayScheduleTests.latest(bench, badges, key: "\(user)/\(app)") {
                        $0["badge"] as? Int == 0
                    }
                    #expect(last["unread"] as? Int == 0 && last["sequence"] as? Int == 2)
                }
            }
            let active = try await GatewayScheduleTests.latest(bench, badges, key: "active/chat") {
                $0["badge"] as? Int == 1
            }
            #expect(active["unread"] as? Int == 1)
            try await instance.waitUntil(
                { instance.metric("focusgate_state_users_forgotten_total") >= Double(Self.quiet.count) },
                what: "the quiet users forgotten, committed")
            #expect(instance.metric("focusgate_state_users_forgotten_total") == Double(Self.quiet.count))
            #expect(
                instance.metric("focusgate_state_notifications_forgotten_total") == Double(2 * Self.quiet.count + 2))

            // Every key that names a quiet user is a tombstone now; "active" keeps live ones.
            let newest = try Self.newestByKey(bench, bench.topics.state)
            func keys(of user: String) -> [[UInt8]: [UInt8]?] {
                newest.filter { $0.key.count > 2 && $0.key.suffix(user.utf8.count).elementsEqual(user.utf8) }
            }
            for user in Self.quiet {
                let userKeys = keys(of: user)
                #expect(userKeys.count >= 5, "\(user): entries, apps and user-wide keys were written")
                #expect(userKeys.values.allSatisfy { $0 == nil }, "\(user): every key a tombstone")
            }
            #expect(keys(of: "active").values.contains { $0 != nil })
            try await instance.stop()

            // A restart restores none of them: their ids are new again, their badges start at 1.
            let restarted = try await InProcessGateway(bench, configuration: configuration)
            try bench.send([
                Events.notification("n-1", user: "quiet-00"), Events.notification("n-3", user: "active"),
            ])
            let back = try await GatewayScheduleTests.latest(bench, badges, key: "quiet-00/chat") {
                $0["badge"] as? Int == 1
            }
            #expect(back["sequence"] as? Int == 1, "a forgotten (user, app) starts afresh")
            try await restarted.waitUntil(
                { restarted.metric("focusgate_duplicates_total") >= 1 }, what: "active's n-3 taken as a duplicate")
            #expect(
                try bench.readAll(bench.topics.delivered).filter { $0.keyString == "quiet-00" }.count == 3,
                "quiet-00's n-1 delivered twice: before and after it was forgotten")
            try await restarted.stop()
            await bench.shutdown()
        }
    }
}
