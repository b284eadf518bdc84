import FocusGateCore
import FocusGateHarness
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension EmbeddedBrokerTests {
    /// Several `focusgate serve` instances of one group, asked as a client behind a load
    /// balancer would ask them (docs/contract.md, "Any instance answers any user").
    @Suite("A group of instances answers as one")
    struct GatewayFleetTests {
        /// What an instance answered for a user's badges: the status, and with a 200 the badges
        /// as `appId badge/unread` (sorted).
        struct Answer: Equatable, CustomStringConvertible {
            var status: Int
            var badges: [String] = []

            var description: String { "\(self.status) \(self.badges)" }
        }

        static func badges(_ instance: ServeProcess, _ user: String) async -> Answer {
            let url = URL(string: "http://127.0.0.1:\(instance.adminPort)/v1/users/\(user)/badges")!
            var request = URLRequest(url: url)
            request.timeoutInterval = 10
            guard let (data, response) = try? await URLSession.shared.data(for: request),
                let status = (response as? HTTPURLResponse)?.statusCode
            else { return Answer(status: 0) }
            guard status == 200 else { return Answer(status: status) }
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            let items = object?["badges"] as? [[String: Any]] ?? []
            return Answer(
                status: 200,
                badges: items.map { "\($0["appId"] ?? "") \($0["badge"] ?? "")/\($0["unread"] ?? "")" }.sorted())
        }

        /// A starter of `size` `focusgate serve` instances of one group, each on its own admin port
        /// and with every instance as its `admin.peers`; instance `i` always gets port `i`.
        static func group(_ bench: GatewayBench, size: Int) -> @Sendable (Int) async throws -> ServeProcess {
            let ports = (0..<size).map { _ in freeLoopbackPort() }
            let peers = ports.map { "127.0.0.1:\($0)" }.joined(separator: ",")
            return { index in
                try await ServeProcess(bench, adminPort: ports[index], environment: ["FOCUSGATE_ADMIN_PEERS": peers])
            }
        }

        static func focused(_ instance: ServeProcess, _ user: String) async -> Bool? {
            let url = URL(string: "http://127.0.0.1:\(instance.adminPort)/v1/users/\(user)/status")!
            guard let (data, _) = try? await URLSession.shared.data(from: url),
                let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            else { return nil }
            return object["focused"] as? Bool
        }

        @Test(
            "two instances answer every user's badges and status alike and right; while a third joins and leaves, every 200 is right"
        )
        func anyInstanceAnswers() async throws {
            let bench = try await GatewayBench()
            let start = Self.group(bench, size: 3)
            // 60 users with 3 delivered notifications each; 10 focused users with none.
            let users = (0..<60).map { "u-fleet-\($0)" }
            let focusedUsers = (0..<10).map { "u-focused-\($0)" }
            let expected = Dictionary(
                uniqueKeysWithValues: users.map { ($0, Answer(status: 200, badges: ["chat 3/3"])) }
                    + focusedUsers.map { ($0, Answer(status: 200, badges: [])) })
            let everyone = users + focusedUsers

            let first = try await start(0)
            let second = try await start(1)
            #expect(try await first.waitUntilReady(timeout: .seconds(60)))
            #expect(try await second.waitUntilReady(timeout: .seconds(60)))
            try await Wait.until("both instances hold partitions", timeout: .seconds(90)) {
                let firstHolds = await first.metric("focusgate_assigned_partitions") >= 1
                let secondHolds = await second.metric("focusgate_assigned_partitions") >= 1
                return firstHolds && secondHolds
            }
            for user in focusedUsers {
                try await bench.put(
                    FocusContext(
                        userID: user, version: 1, focus: "Work",
                        expiresAt: Date(timeIntervalSinceNow: 86_400), otherApps: .silence))
            }
            try bench.send(users.flatMap { user in (0..<3).map { Events.notification("\(user)-\($0)", user: user) } })

            // Right on both, once the outputs are committed.
            let pair = [first, second]
            try await Wait.until("every user's badges right on both instances", timeout: .seconds(90)) {
                for instance in pair {
                    for user in everyone where await Self.badges(instance, user) != expected[user] { return false }
                }
                return true
            }
            for instance in pair {
                for user in users { #expect(await Self.focused(instance, user) == false, "\(user)") }
                for user in focusedUsers { #expect(await Self.focused(instance, user) == true, "\(user)") }
            }

            // A third instance joins, then leaves: asked all along, every instance answers right
            // or 503 (never a wrong 200), and all answer right again once each change settles.
            var wrong: [String] = []
            var counts = (ok: 0, unavailable: 0)
            /// Asks every user on `instances`: whether all answered right.
            @Sendable func round(_ instances: [ServeProcess]) async -> (
                allRight: Bool, wrong: [String], ok: Int, other: Int
            ) {
                var result = (allRight: true, wrong: [String](), ok: 0, other: 0)
                for (index, instance) in instances.enumerated() {
                    for user in everyone {
                        let answer = await Self.badges(instance, user)
                        if answer.status == 200 {
                            result.ok += 1
                            if answer != expected[user] { result.wrong.append("instance \(index) \(user): \(answer)") }
                        } else {
                            result.other += 1
                        }
                        if answer != expected[user] { result.allRight = false }
                    }
                }
                return result
            }
            let third = try await start(2)
            try await Wait.until(
                "the third instance holds partitions and all three answer right", timeout: .seconds(120)
            ) {
                let held = await third.metric("focusgate_assigned_partitions") >= 1
                let result = await round([first, second, third])
                wrong += result.wrong
                counts.ok += result.ok
                counts.unavailable += result.other
                return held && result.allRight
            }
            let stopping = Task { await third.stop(SIGTERM) }
            try await Wait.until("the two answer right after the third left", timeout: .seconds(120)) {
                let result = await round(pair)
                wrong += result.wrong
                counts.ok += result.ok
                counts.unavailable += result.other
                return !third.isRunning && result.allRight
            }
            #expect(await stopping.value == 0)
            #expect(wrong.isEmpty, "wrong 200 answers: \(wrong.prefix(10))")
            print(
                "fleet answers while the third joined and left: \(counts.ok) right 200s, \(counts.unavailable) other answers (503 owner-unavailable)"
            )
            #expect(await first.stop(SIGTERM) == 0)
            #expect(await second.stop(SIGTERM) == 0)
            await bench.shutdown()
        }
    }
}
