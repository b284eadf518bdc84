import FocusGate
import FocusGateCore
import FocusGateHarness
import FocusGateKafka
import Foundation
import Glibc
import Testing

extension GatewayScenarioTests {
    /// Summaries of what a Focus silenced, on notifications.summaries, against the embedded broker
    /// over TCP: at the end of a scheduled Focus with no input, across a partition handover and
    /// across a SIGKILL restart, each checked by the auditor.
    @Suite("Gateway summaries")
    struct GatewaySummaryTests {
        typealias DailySleep = GatewayScheduleTests.DailySleep

        /// The `focusgate-source` header of each silenced output, by notification id.
        static func sources(_ audit: Audit) -> [String: String] {
            var sources: [String: String] = [:]
            for message in audit.silenced {
                guard let id = Audit.id(of: message),
                    let header = message.headers.last(where: { $0.name == "focusgate-source" })?.value
                else { continue }
                sources[id] = String(decoding: header, as: UTF8.self)
            }
            return sources
        }

        /// `context` with summaries at the end of each Focus period.
        static func withSummaries(_ context: FocusContext) -> FocusContext {
            var context = context
            context.summaries = .init()
            return context
        }

        static func json(_ record: Audit.SummaryRecord) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(record.value)) as? [String: Any])
        }

        @Test("the end of a scheduled Sleep sums up what it silenced, once, with no input (injected clock)")
        func scheduleEnd() async throws {
            let bench = try await GatewayBench()
            let clock = ManualWallClock()
            var configuration = bench.configuration()
            configuration.clock = clock
            let instance = try await InProcessGateway(bench, configuration: configuration)
            let sleep = DailySleep(user: "u-sum", clock: clock)
            try await bench.put(Self.withSummaries(sleep.context))
            try await instance.waitUntil({ instance.invalidationsHandled >= 1 }, what: "the context announced")
            clock.advance(by: sleep.untilOpen(clock))
            let records = [
                Events.notification("s-1", user: "u-sum", thread: "family"),
                Events.notification("s-2", user: "u-sum", thread: "family"),
                Events.notification("s-3", user: "u-sum", app: "mail"),
            ]
            try bench.send(records)
            let silenced = try await bench.waitForOutputs(records.count)
            #expect(silenced.silenced.count == records.count, "Sleep silences every app")
            #expect(silenced.summaries.isEmpty, "Sleep is still on")

            // Sleep ends an hour later: no message says so; the timer sums it up.
            clock.advance(by: .seconds(3_600))
            // The summary and the badges recounted without Sleep come with the same commit.
            let audit = try await Wait.for("a summary and the badges", timeout: .seconds(20), { try bench.audit() }) {
                !$0.summaries.isEmpty && $0.finalBadges["u-sum/chat"]?.badge == 2
                    && $0.finalBadges["u-sum/mail"]?.badge == 1
            }
            audit.check(
                against: records, consumedAgain: instance.consumedAgain, checksBadges: false)
            let summaries = audit.checkSummaries()
            let summary = try #require(summaries.values.first)
            #expect(summaries.count == 1 && audit.summaries.count == 1)
            #expect(summary.trigger == "focus-ended" && summary.focus == "Sleep" && summary.total == 3)
            #expect(Set(summary.items) == ["s-1", "s-2", "s-3"])
            let object = try Self.json(summary)
            #expect(object["periodEnd"] as? String == Timestamp.rfc3339(milliseconds: sleep.end))
            #expect(object["contextVersion"] as? Int == 1)
            let apps = try #require(object["apps"] as? [[String: Any]])
            #expect(apps.map { $0["appId"] as? String } == ["chat", "mail"])
            let chatThreads = apps.first?["threads"] as? [[String: Any]]
            #expect(chatThreads?.map { "\($0["threadId"] ?? "")=\($0["total"] ?? "")" } == ["family=2"])
            // Each item's source is its silenced record's focusgate-source.
            let sources = Self.sources(audit)
            for item in apps.flatMap({ $0["top"] as? [[String: Any]] ?? [] }) {
                let id = try #require(item["id"] as? String)
                #expect(item["source"] as? String == sources[id], "\(id)")
            }
            #expect(instance.metric("focusgate_summaries_total") == 1)
            try await instance.stop()
            await bench.shutdown()
        }

        @Test("what a Focus silenced moves with its partition: after a handover the survivor sums up each user once")
        func acrossHandover() async throws {
            let bench = try await GatewayBench()
            let clock = ManualWallClock()
            var configuration = bench.configuration()
            configuration.clock = clock
            let first = try await InProcessGateway(bench, configuration: configuration)
            let users = (0..<12).map { "u-sum-\($0)" }
            var sleep: DailySleep?
            for user in users {
                sleep = DailySleep(user: user, clock: clock)
                try await bench.put(Self.withSummaries(sleep!.context))
            }
            try await first.waitUntil(
                { first.invalidationsHandled >= Double(users.count) }, what: "the contexts announced")
            clock.advance(by: sleep!.untilOpen(clock))
            let records = users.flatMap { user in
                [
                    Events.notification("\(user)-a", user: user),
                    Events.notification("\(user)-b", user: user, app: "mail"),
                ]
            }
            try bench.send(records)
            try await bench.waitForOutputs(records.count)

            // A second instance takes some partitions (their entries and timers through the
            // changelog), then the first leaves.
            let second = try await GatewayScheduleTests.handOver(
                bench, from: first, configuration: configuration, records: records.count)

            clock.advance(by: .seconds(3_600))
            let done: (Audit) -> Bool = { audit in
                let badges = audit.finalBadges
                return Set(audit.summaryRecords.map(\.userID)).count == users.count
                    && users.allSatisfy { badges["\($0)/chat"]?.badge == 1 && badges["\($0)/mail"]?.badge == 1 }
            }
            let audit: Audit
            do {
                audit = try await Wait.for(
                    "every user's summary", timeout: .seconds(30), { try bench.audit() }, where: done)
            } catch {
                // Which users lack what, and what each instance did.
                let last = try bench.audit()
                let summed = Set(last.summaryRecords.map(\.userID))
                let badges = last.finalBadges
                let missing = users.filter { !summed.contains($0) }
                let badgeText = users.map {
                    "\($0): chat \(badges["\($0)/chat"]?.badge ?? -1) mail \(badges["\($0)/mail"]?.badge ?? -1)"
                }
                Issue.record(
                    """
                    \(error); no summary for \(missing); badges \(badgeText)
                    first: \(first.diagnosis)
                    second: \(second.diagnosis)
                    """)
                throw error
            }
            audit.check(
                against: records,
                consumedAgain: first.consumedAgain + second.consumedAgain,
                checksBadges: false)
            let summaries = audit.checkSummaries()
            #expect(summaries.count == users.count, "one summary a user")
            for user in users {
                let mine = summaries.values.filter { $0.userID == user }
                #expect(mine.map { Set($0.items) } == [["\(user)-a", "\(user)-b"]], "\(user)")
            }
            #expect(first.metric("focusgate_summaries_total") == 0)
            #expect(second.metric("focusgate_summaries_total") == Double(users.count))
            try await second.stop()
            await bench.shutdown()
        }

        @Test(
            "serve killed with SIGKILL while Sleep silenced: the next serve sums it up at the expiry, once, by the real clock"
        )
        func acrossKill() async throws {
            let bench = try await GatewayBench()
            let first = try await ServeProcess(bench)
            #expect(try await first.waitUntilReady())
            #expect(try await first.waitUntilAssigned())
            let expiry = SystemWallClock().nowMilliseconds() + 20_000
            try await bench.put(
                FocusContext(
                    userID: "u-kill-sum", version: 1, focus: "Sleep",
                    expiresAt: Date(timeIntervalSince1970: Double(expiry) / 1000), otherApps: .silence,
                    summaries: .init()))
            let records = [Events.notification("ks-1", user: "u-kill-sum", thread: "t")]
            try bench.send(records)
            let silenced = try await bench.waitForOutputs(1)
            #expect(silenced.silenced.count == 1)
            // The transaction with the notification, its entry and the expiry's timer has committed.
            #expect(try await first.waitForMetric(#"focusgate_transactions_total{result="committed"}"#, atLeast: 1))
            try #require(try bench.audit().summaries.isEmpty && SystemWallClock().nowMilliseconds() < expiry)
            #expect(await first.stop(SIGKILL) == SIGKILL)

            let second = try await ServeProcess(bench)
            #expect(try await second.waitUntilReady())
            let audit = try await Wait.for("the summary and the badge", timeout: .seconds(90), { try bench.audit() }) {
                !$0.summaries.isEmpty && $0.finalBadges["u-kill-sum/chat"]?.badge == 1
            }
            audit.check(against: records, consumedAgain: 0, checksBadges: false)
            let summaries = audit.checkSummaries()
            #expect(summaries.values.map(\.items) == [["ks-1"]])
            #expect(summaries.values.map(\.trigger) == ["focus-ended"])
            let object = try Self.json(try #require(summaries.values.first))
            #expect(object["periodEnd"] as? String == Timestamp.rfc3339(milliseconds: expiry + 1))
            #expect(await second.stop(SIGTERM) == 0)
            #expect(try bench.audit().summaries.count == 1, "not published again at the stop")
            await bench.shutdown()
        }
    }
}
