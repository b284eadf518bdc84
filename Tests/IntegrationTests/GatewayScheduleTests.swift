import FocusGate
import FocusGateCore
import FocusGateHarness
import Foundation
import Glibc
import Testing

extension GatewayScenarioTests {
    /// Schedules against the embedded broker over TCP, with time moved by an injected clock:
    /// transitions with no message, timers across a restart, focus.status.
    @Suite("Gateway schedules and timers")
    struct GatewayScheduleTests {
        /// A user's daily Sleep (badges hidden, every app silenced) in Paris, from the next whole
        /// minute an hour after `clock`'s now, for an hour.
        struct DailySleep {
            static let paris = ZoneClock(identifier: "Europe/Paris")!
            static let minute: Int64 = 60_000
            /// Local wall-clock milliseconds of the window's start.
            let start: Int64
            let context: FocusContext

            init(user: String, clock: some WallClock) {
                self.init(
                    user: user,
                    start: (Self.paris.local(clock.nowMilliseconds() + 3_600_000) / Self.minute + 1) * Self.minute)
            }

            /// The window from `start`, local wall-clock milliseconds on a whole minute.
            init(user: String, start: Int64) {
                self.start = start
                func time(_ local: Int64) -> FocusContext.LocalTime {
                    FocusContext.LocalTime(
                        String(format: "%02d:%02d", local / 3_600_000 % 24, local / Self.minute % 60))!
                }
                self.context = FocusContext(
                    userID: user, version: 1, timeZone: "Europe/Paris",
                    foci: ["Sleep": .init(hideBadges: true, otherApps: .silence)],
                    schedules: [
                        .init(
                            focus: "Sleep", days: FocusContext.Weekday.allCases, start: time(self.start),
                            end: time(self.start + 3_600_000))
                    ])
            }

            /// How far `clock` must move for the window to have opened a second ago.
            func untilOpen(_ clock: some WallClock) -> Duration {
                .milliseconds(self.start - Self.paris.local(clock.nowMilliseconds()) + 1_000)
            }

            /// The instant the window closes.
            var end: Int64 { Self.paris.instant(ofLocal: self.start + 3_600_000) }
        }

        /// A second instance joins and takes some partitions, then `first` stops: the survivor,
        /// once it owns every partition.
        /// A second instance joins, then `first` leaves; returns once the second owns every
        /// partition and the group has committed all `records` inputs. A partition's inputs that
        /// the first had not committed (a commit refused while the partitions moved) are replayed
        /// by the second: waiting for them keeps a test from moving its clock before that replay
        /// decides them, at the new instant.
        static func handOver(
            _ bench: GatewayBench, from first: InProcessGateway, configuration: GatewayConfiguration, records: Int
        ) async throws -> InProcessGateway {
            let second = try await InProcessGateway(bench, configuration: configuration)
            // A join takes the embedded broker two rebalances of 5 s or more (cooperative
            // protocol); beside a clean-clone make test on two cores it once took more than 30 s.
            try await second.waitUntil(
                { second.metric("focusgate_rebalances_total") >= 1 }, timeout: .seconds(90),
                what: "the joining instance's first rebalance")
            try await first.stop()
            try await second.waitUntil(
                { second.metric("focusgate_assigned_partitions") == Double(bench.partitions) }, timeout: .seconds(30),
                what: "the survivor owns every partition")
            _ = try await bench.settled(records: records, timeout: .seconds(60)) {
                "first: \(first.diagnosis)\nsecond: \(second.diagnosis)"
            }
            return second
        }

        /// Puts the same daily Sleep (``DailySleep``, from `clock`'s now) in every user's context.
        static func putDailySleep(_ bench: GatewayBench, users: [String], clock: some WallClock) async throws
            -> DailySleep
        {
            var sleep: DailySleep?
            for user in users {
                sleep = DailySleep(user: user, clock: clock)
                try await bench.put(sleep!.context)
            }
            return sleep!
        }

        /// Waits until every user's latest `chat` badge is 0 (Sleep hides badges).
        static func waitForSleepBadges(_ bench: GatewayBench, users: [String]) async throws {
            let asleep = try await Wait.for(
                "every user's Sleep badge", timeout: .seconds(30),
                {
                    try users.filter {
                        try Self.records(bench, bench.topics.badges, key: "\($0)/chat").last?["badge"] as? Int == 0
                    }
                }
            ) { $0.count == users.count }
            #expect(asleep.count == users.count)
        }

        /// The JSON values of `topic`'s records under `key`, in order.
        static func records(_ bench: GatewayBench, _ topic: String, key: String) throws -> [[String: Any]] {
            try bench.readAll(topic).filter { $0.keyString == key }.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.value ?? [])) as? [String: Any]
            }
        }

        /// Waits for the latest record of `topic` under `key` to satisfy `accept`.
        static func latest(
            _ bench: GatewayBench, _ topic: String, key: String, timeout: Duration = .seconds(20),
            where accept: @escaping ([String: Any]) -> Bool
        ) async throws -> [String: Any] {
            try await Wait.for(
                "a record of \(key) on \(topic)", timeout: timeout, { try Self.records(bench, topic, key: key).last }
            ) {
                $0.map(accept) ?? false
            }!
        }

        @Test("a schedule turns a Focus on and off and the badge follows, with no message (injected clock)")
        func scheduleRecomputesBadges() async throws {
            let bench = try await GatewayBench()
            let clock = ManualWallClock()
            var configuration = bench.configuration()
            configuration.clock = clock
            let instance = try await InProcessGateway(bench, configuration: configuration)
            let sleep = DailySleep(user: "u-sched", clock: clock)
            try await bench.put(sleep.context)
            try await instance.waitUntil({ instance.invalidationsHandled >= 1 }, what: "the context announced")
            let badges = bench.topics.badges

            try bench.send([Events.notification("s-1", user: "u-sched", criteria: "home")])
            let before = try await Self.latest(bench, badges, key: "u-sched/chat") { $0["badge"] as? Int == 1 }
            #expect(before["focus"] is NSNull, "no Focus on yet")

            // The window opens: Sleep hides badges; no message says so.
            clock.advance(by: sleep.untilOpen(clock))
            let asleep = try await Self.latest(bench, badges, key: "u-sched/chat") { $0["badge"] as? Int == 0 }
            #expect(asleep["focus"] as? String == "Sleep" && asleep["unread"] as? Int == 1)
            // And closes an hour later: the badge is back.
            clock.advance(by: .seconds(3_600))
            let awake = try await Self.latest(bench, badges, key: "u-sched/chat") {
                $0["badge"] as? Int == 1 && $0["focus"] is NSNull
            }
            #expect((awake["sequence"] as? Int ?? 0) > (asleep["sequence"] as? Int ?? 0))
            // focus.status said focused (until the window's end), then not, once each; never the name.
            let statuses = try await Wait.for(
                "two status records", timeout: .seconds(20),
                { try Self.records(bench, bench.topics.status, key: "u-sched") }
            ) { $0.count >= 2 }
            #expect(statuses.map { $0["focused"] as? Bool } == [true, false], "\(statuses)")
            #expect(statuses.first?["until"] as? String == Timestamp.rfc3339(milliseconds: sleep.end))
            #expect(statuses.map { $0["sequence"] as? Int } == [1, 2])
            #expect(statuses.allSatisfy { $0["focus"] == nil && $0["contextVersion"] as? Int == 1 })
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("serve killed with SIGKILL after a timer was committed: the next serve fires it once, by the real clock")
        func scheduleTimerSurvivesKill() async throws {
            let bench = try await GatewayBench()
            let first = try await ServeProcess(bench)
            #expect(try await first.waitUntilReady())
            #expect(try await first.waitUntilAssigned())
            // Sleep from the first whole minute at least 20 s from now (Paris time), for an hour.
            let now = DailySleep.paris.local(SystemWallClock().nowMilliseconds())
            try await bench.put(
                DailySleep(user: "u-kill", start: ((now + 20_000) / DailySleep.minute + 1) * DailySleep.minute).context)
            let records = [Events.notification("k-1", user: "u-kill", criteria: "home")]
            try bench.send(records)
            _ = try await Self.latest(bench, bench.topics.badges, key: "u-kill/chat") { $0["badge"] as? Int == 1 }
            // The one transaction with the notification, its badge and the timer has committed.
            #expect(try await first.waitForMetric(#"focusgate_transactions_total{result="committed"}"#, atLeast: 1))
            #expect(await first.stop(SIGKILL) == SIGKILL)

            let second = try await ServeProcess(bench)
            #expect(try await second.waitUntilReady())
            let asleep = try await Self.latest(bench, bench.topics.badges, key: "u-kill/chat", timeout: .seconds(120)) {
                $0["badge"] as? Int == 0
            }
            #expect(asleep["focus"] as? String == "Sleep")
            #expect(
                try Self.records(bench, bench.topics.badges, key: "u-kill/chat").map { $0["badge"] as? Int } == [1, 0])
            #expect(
                try Self.records(bench, bench.topics.status, key: "u-kill").map { $0["focused"] as? Bool } == [true])
            // Nothing lost or repeated across the kill (the badges are checked above: a schedule
            // changes them with no input, which the auditor's recomputation cannot know).
            try bench.audit().check(against: records, consumedAgain: 0, checksBadges: false)
            #expect(await second.stop(SIGTERM) == 0)
            await bench.shutdown()
        }

        @Test("timers move with their partitions: after a handover the survivor fires every user's transition, once")
        func scheduleTimersAcrossHandover() async throws {
            let bench = try await GatewayBench()
            let clock = ManualWallClock()
            var configuration = bench.configuration()
            configuration.clock = clock
            let first = try await InProcessGateway(bench, configuration: configuration)
            let users = (0..<24).map { "u-hand-\($0)" }
            let sleep = try await Self.putDailySleep(bench, users: users, clock: clock)
            let records = users.map { Events.notification("h-\($0)", user: $0, criteria: "home") }
            try bench.send(records)
            _ = try await Wait.for(
                "every user's first badge", timeout: .seconds(30),
                { try users.filter { try Self.records(bench, bench.topics.badges, key: "\($0)/chat").count == 1 } }
            ) { $0.count == users.count }

            // A second instance takes some partitions (and their timers), then the first leaves.
            let second = try await Self.handOver(
                bench, from: first, configuration: configuration, records: records.count)

            // Sleep starts for everyone; no input comes.
            clock.advance(by: sleep.untilOpen(clock))
            try await Self.waitForSleepBadges(bench, users: users)
            for user in users {
                let badges = try Self.records(bench, bench.topics.badges, key: "\(user)/chat")
                #expect(badges.map { $0["badge"] as? Int } == [1, 0], "\(user): \(badges)")
                #expect(
                    try Self.records(bench, bench.topics.status, key: user).map { $0["focused"] as? Bool } == [true])
            }
            #expect(second.metric("focusgate_timers_fired_total") == Double(users.count))
            try bench.audit().check(
                against: records,
                consumedAgain: first.consumedAgain + second.consumedAgain,
                checksBadges: false)
            try await second.stop()
            await bench.shutdown()
        }

        @Test("a backlog of due transitions drains turn after turn with no input, not one turn per wait for records")
        func timerBacklogDrainsWithoutInput() async throws {
            let bench = try await GatewayBench()
            let clock = ManualWallClock()
            var configuration = bench.configuration()
            configuration.clock = clock
            configuration.maxTimersPerBatch = 1  // one transition a turn: 60 turns
            configuration.commitInterval = .seconds(5)  // a turn's wait for records: 100 ms
            let instance = try await InProcessGateway(bench, configuration: configuration)
            let users = (0..<60).map { "u-backlog-\($0)" }
            let sleep = try await Self.putDailySleep(bench, users: users, clock: clock)
            try bench.send(users.map { Events.notification("b-\($0)", user: $0, criteria: "home") })
            try await instance.waitUntil(
                { instance.metric("focusgate_timers_pending", labels: #"worker="0""#) == Double(users.count) },
                what: "every user's timer watched")

            // Sleep starts for everyone at once and no input comes. Turns that waited for records
            // (100 ms each) between two transitions would take about 6 s.
            clock.advance(by: sleep.untilOpen(clock))
            try await instance.waitUntil(
                { instance.metric("focusgate_timers_fired_total") == Double(users.count) }, timeout: .seconds(2),
                what: "every due transition fired")
            try await Self.waitForSleepBadges(bench, users: users)
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("a schedule's transition survives a restart with no input: the timer is part of the committed state")
        func scheduleTimerSurvivesRestart() async throws {
            let bench = try await GatewayBench()
            let clock = ManualWallClock()
            var configuration = bench.configuration()
            configuration.clock = clock
            let first = try await InProcessGateway(bench, configuration: configuration)
            let sleep = DailySleep(user: "u-timer", clock: clock)
            try await bench.put(sleep.context)
            try bench.send([Events.notification("t-1", user: "u-timer", criteria: "home")])
            _ = try await Self.latest(bench, bench.topics.badges, key: "u-timer/chat") { $0["badge"] as? Int == 1 }
            // The badge record is committed, and the timer with it, in the same transaction.
            try await first.stop()

            // The window opens while no instance runs; the next one gets no input at all.
            clock.advance(by: sleep.untilOpen(clock))
            let second = try await InProcessGateway(bench, configuration: configuration)
            let asleep = try await Self.latest(bench, bench.topics.badges, key: "u-timer/chat", timeout: .seconds(30)) {
                $0["badge"] as? Int == 0
            }
            #expect(asleep["focus"] as? String == "Sleep")
            let badges = try Self.records(bench, bench.topics.badges, key: "u-timer/chat")
            #expect(badges.filter { $0["badge"] as? Int == 0 }.count == 1, "fired once")
            #expect(second.metric("focusgate_timers_fired_total") == 1)
            #expect(try Self.records(bench, bench.topics.status, key: "u-timer").count == 1, "focused, said once")
            try await second.stop()
            await bench.shutdown()
        }
    }
}
