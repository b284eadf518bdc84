import FocusGate
import FocusGateCore
import FocusGateStore
import Foundation
import Synchronization
import Testing

/// A store whose loads do not answer between ``stall()`` and ``release()`` (each waits for the
/// release), as a store that hangs does; everything else goes to the store it wraps.
final class StallingStore: ContextStore {
    /// Whether loads stall, and the loads waiting for the release.
    private let gate = Mutex<(stalled: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
    private let store: any ContextStore

    init(_ store: any ContextStore) {
        self.store = store
    }

    func stall() {
        self.gate.withLock { $0.stalled = true }
    }

    /// Lets the waiting loads and every later one through.
    func release() {
        let waiting = self.gate.withLock { gate in
            gate.stalled = false
            defer { gate.waiting.removeAll() }
            return gate.waiting
        }
        for load in waiting { load.resume() }
    }

    func contexts(for userIDs: [String]) async throws(ContextStoreError) -> [UserID: FocusContext] {
        await withCheckedContinuation { (load: CheckedContinuation<Void, Never>) in
            let proceeds = self.gate.withLock { gate in
                if gate.stalled { gate.waiting.append(load) }
                return !gate.stalled
            }
            if proceeds { load.resume() }
        }
        return try await self.store.contexts(for: userIDs)
    }

    func put(_ context: FocusContext) async throws(ContextStoreError) -> ContextWriteOutcome {
        try await self.store.put(context)
    }

    func delete(userID: String) async throws(ContextStoreError) -> Int64? {
        try await self.store.delete(userID: userID)
    }

    func ping() async throws(ContextStoreError) { try await self.store.ping() }

    func close() async { await self.store.close() }
}

extension EmbeddedBrokerTests {
    /// `/readyz`'s pipeline checks follow the cluster and the workers' loops, both ways.
    @Suite("Readiness")
    struct ReadinessTests {
        @Test("while every broker is down the kafka check fails; once they are up again it passes")
        func brokersDown() async throws {
            let bench = try await GatewayBench()
            var configuration = bench.configuration(mode: .atLeastOnce)
            configuration.readinessKafkaTimeout = .seconds(6)
            let instance = try await InProcessGateway(bench, configuration: configuration)
            try await instance.waitUntil(
                { instance.gateway.readinessChecks.values.allSatisfy { $0 } }, timeout: .seconds(60),
                what: "every check passing")
            try bench.broker.setBroker(1, up: false)
            // The consumer's statistics come every 5 s: the check fails 6 to 11 s after the outage.
            try await instance.waitUntil(
                { instance.gateway.readinessChecks["kafka"] == false }, timeout: .seconds(40),
                what: "the kafka check failing")
            try bench.broker.setBroker(1, up: true)
            try await instance.waitUntil(
                { instance.gateway.readinessChecks["kafka"] == true }, timeout: .seconds(60),
                what: "the kafka check passing again")
            try await instance.stop()
            await bench.shutdown()
        }

        @Test(
            "while a worker waits on a store that does not answer, longer than the loop timeout, the loop check fails; after, it passes"
        )
        func workerStalled() async throws {
            let bench = try await GatewayBench()
            let store = StallingStore(bench.store)
            var configuration = bench.configuration(mode: .atLeastOnce)
            configuration.readinessLoopTimeout = .seconds(1)
            let instance = try await InProcessGateway(bench, configuration: configuration, store: store)
            try await instance.waitUntil(
                { instance.gateway.readinessChecks["loop"] == true && instance.gateway.isConsuming },
                timeout: .seconds(60), what: "the loop check passing")
            // Each batch of users not cached waits for the store up to the cache's load timeout
            // (2 s), and the worker's loop does not turn meanwhile; batch after batch while the
            // store does not answer.
            store.stall()
            defer { store.release() }  // also when a wait below fails
            try bench.send((0..<200).map { Events.notification("n-\($0)", user: "u-\($0)", criteria: "work") })
            try await instance.waitUntil(
                { instance.gateway.readinessChecks["loop"] == false }, timeout: .seconds(60),
                what: "the loop check failing")
            store.release()
            try await instance.waitUntil(
                { instance.gateway.readinessChecks["loop"] == true }, timeout: .seconds(60),
                what: "the loop check passing again")
            try await instance.stop()
            await bench.shutdown()
        }
    }
}
