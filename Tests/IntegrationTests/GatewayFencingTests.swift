import FocusGateHarness
import Foundation
import Testing

extension EmbeddedBrokerTests {
    /// Each worker's transactional id comes from `instance.name` (default: host name and admin
    /// port), so that a restarted instance fences its predecessor's open transaction at once
    /// (docs/contract.md, "Fencing and the ACLs a secured cluster needs").
    @Suite("Stable transactional ids")
    struct GatewayFencingTests {
        /// The workers' transactional ids, from the instance's "gateway starting" log line (JSON).
        static func transactionalIDs(_ instance: ServeProcess) async throws -> [String] {
            try await Wait.for("the gateway starting line", timeout: .seconds(60)) {
                for line in instance.standardError.split(separator: "\n") where line.contains("gateway starting") {
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    let metadata = object?["metadata"] as? [String: Any] ?? object ?? [:]
                    if let ids = metadata["kafka.transactionalIds"] as? [String] { return ids }
                }
                return []
            } where: {
                !$0.isEmpty
            }
        }

        @Test(
            "the ids are the same across a restart of the instance, two instances never share one, and a second start with the same name and port stops at its bind without fencing the first"
        )
        func stableAndDistinct() async throws {
            let bench = try await GatewayBench()
            let environment = ["FOCUSGATE_LOG_FORMAT": "json", "FOCUSGATE_WORKERS": "2"]
            let first = try await ServeProcess(bench, logLevel: "info", environment: environment)
            let firstIDs = try await Self.transactionalIDs(first)
            let second = try await ServeProcess(bench, logLevel: "info", environment: environment)
            let secondIDs = try await Self.transactionalIDs(second)
            #expect(firstIDs.count == 2 && secondIDs.count == 2)
            #expect(Set(firstIDs).isDisjoint(with: secondIDs), "\(firstIDs) and \(secondIDs)")
            #expect(firstIDs.allSatisfy { $0.hasPrefix("focusgate-") && $0.contains("-\(first.adminPort)-") })

            // Killed and started again as the same instance (same host and admin port): the same ids.
            let port = first.adminPort
            #expect(await first.stop(SIGKILL) == SIGKILL)
            let restarted = try await ServeProcess(bench, adminPort: port, logLevel: "info", environment: environment)
            #expect(try await Self.transactionalIDs(restarted) == firstIDs)

            // A named instance: the name, whatever the port.
            let named = try await ServeProcess(
                bench, logLevel: "info",
                environment: environment.merging(["FOCUSGATE_INSTANCE_NAME": "focusgate-7"]) { $1 })
            #expect(try await Self.transactionalIDs(named) == ["focusgate-focusgate-7-0", "focusgate-focusgate-7-1"])

            // The same name and port again while the instance runs: the duplicate cannot listen,
            // stops, and never claimed the ids; the running instance stays ready and keeps working.
            #expect(try await second.waitUntilReady(timeout: .seconds(60)))
            let duplicate = try await ServeProcess(
                bench, adminPort: second.adminPort, logLevel: "info", environment: environment)
            #expect(await duplicate.exitStatus() != 0)
            #expect(!duplicate.standardError.contains("gateway starting"), "the duplicate's workers never started")
            // Once the killed instance's members are out of the group and every partition is held
            // by a running instance: a rebalance meanwhile would abort the record's transaction
            // and replay it elsewhere, and the embedded broker shows aborted records.
            try await Wait.until("every partition held by a running instance", timeout: .seconds(60)) {
                var held = 0.0
                for instance in [second, restarted, named] {
                    held += await instance.metric("focusgate_assigned_partitions")
                }
                return held == Double(bench.partitions)
            }
            try bench.send([Events.notification("fence-1", user: "u-fence")])
            let audit = try await bench.waitForOutputs(1)
            #expect(audit.delivered.count == 1)
            #expect(second.isRunning && !second.standardError.contains("fenced"))

            #expect(await restarted.stop(SIGTERM) == 0)
            #expect(await named.stop(SIGTERM) == 0)
            #expect(await second.stop(SIGTERM) == 0)
            await bench.shutdown()
        }
    }
}
