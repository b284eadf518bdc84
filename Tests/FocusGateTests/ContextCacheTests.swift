import FocusGate
import FocusGateCore
import FocusGateStore
import FocusGateHarness
import FocusGateKafka
import FocusGateThreads
import Foundation
import Prometheus
import FocusGateTestSupport
import Testing

@Suite("Context cache", .serialized)
struct ContextCacheTests {
    private func cache(_ store: any ContextStore, maxEntries: Int = 100, timeout: Duration = .seconds(2)) -> (
        ContextCache, PrometheusCollectorRegistry
    ) {
        let registry = PrometheusCollectorRegistry()
        var configuration = ContextCache.Configuration()
        configuration.maxEntries = maxEntries
        configuration.loadTimeout = timeout
        return (
            ContextCache(
                store: store, configuration: configuration, metrics: ContextCacheMetrics(registry: registry),
                logger: testLogger), registry
        )
    }

    /// Runs `body` with a private PostgreSQL server (which the test may stop or lock) and a
    /// migrated store holding `u` at version 1.
    private func withPrivatePostgres(_ body: (PostgresServer, PostgresContextStore, String) async throws -> Void)
        async throws
    {
        let server = try PostgresServer.startPrivate()
        defer { server.destroy() }
        let database = "cache_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let store = try PostgresContextStore(url: server.url(database: database), logger: testLogger)
        try await store.migrate()
        _ = try await store.put(workContext("u", version: 1))
        try await body(server, store, database)
        await store.close()
    }

    /// Waits until another session holds a lock on focus_contexts.
    private func waitForTableLock(_ server: PostgresServer, _ database: String) async throws {
        try await self.waitUntilExists(
            "another session holding a lock on focus_contexts",
            "SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'focus_contexts' AND l.mode = 'AccessExclusiveLock' AND l.granted",
            server, database)
    }

    /// Waits until a query of the store's waits on a lock (a load is in flight, blocked).
    private func waitForBlockedLoad(_ server: PostgresServer, _ database: String) async throws {
        try await self.waitUntilExists(
            "a load blocked on the table lock",
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%focus_contexts%' AND query NOT ILIKE '%LOCK TABLE%'",
            server, database)
    }

    /// Waits until `query` returns a row.
    private func waitUntilExists(
        _ what: String, _ query: String, _ server: PostgresServer, _ database: String
    ) async throws {
        try await Wait.until(what, timeout: .seconds(5)) {
            (try? server.psql(
                "DO $$ BEGIN IF NOT EXISTS (\(query)) THEN RAISE EXCEPTION 'not yet'; END IF; END $$",
                database: database)) != nil
        }
    }

    @Test("a batch's misses load together; hits and 'no context' answers come from memory")
    func hitsMissesAndNegativeEntries() async throws {
        let store = try await temporarySQLiteStore()
        _ = try await store.put(workContext("a", version: 1))
        let (cache, registry) = self.cache(store)

        let first = try await cache.resolveOffPool(["a", "b", "a"])
        #expect(first["a"]?.version == 1)
        #expect(first["b"]?.hasNoContext == true)
        #expect(metric(registry, "focusgate_context_cache_misses_total") == 2)

        // The store now has a context for b, but "no context" is cached until an invalidation says otherwise.
        _ = try await store.put(workContext("b", version: 1))
        let second = try await cache.resolveOffPool(["a", "b"])
        #expect(second["b"]?.hasNoContext == true)
        #expect(metric(registry, "focusgate_context_cache_hits_total") == 2)
        #expect(metric(registry, "focusgate_context_cache_entries") == 2)
    }

    @Test("look-alike user ids (NFC and NFD, a Kelvin sign for K) are cached apart, in one batch or in turn")
    func lookAlikeIDs() async throws {
        let store = try await temporarySQLiteStore()
        let pairs = [("caf\u{E9}", "cafe\u{301}"), ("Kata0", "\u{212A}ata0")]
        for (real, _) in pairs { _ = try await store.put(workContext(real, version: 4)) }
        let (cache, _) = self.cache(store)
        // café: the look-alike first (a cached "no context" must not answer for the real user);
        // Kata0: the real user first (its context must not answer for the look-alike).
        let first = try await cache.resolveOffPool([pairs[0].1, pairs[1].0])
        let second = try await cache.resolveOffPool([pairs[0].0, pairs[1].1])
        let together = try await cache.resolveOffPool(pairs.flatMap { [$0.0, $0.1] })
        #expect(first.count == 2 && second.count == 2 && together.count == 4)
        for (real, lookAlike) in pairs {
            for answers in [first, second, together] where answers[UserID(real)] != nil {
                #expect(answers[UserID(real)]?.version == 4, "\(real)")
            }
            for answers in [first, second, together] where answers[UserID(lookAlike)] != nil {
                #expect(answers[UserID(lookAlike)]?.hasNoContext == true, "\(Array(lookAlike.utf8))")
            }
        }
        #expect(cache.count == 4)
        // An invalidation of the look-alike leaves the real user's context in place.
        _ = try await cache.applyOffPool(.drop(userID: pairs[0].1))
        #expect(try await cache.resolveOffPool([pairs[0].0])[UserID(pairs[0].0)]?.version == 4)
    }

    @Test("a worker's lookups go into its own buffer, one per position, its storage kept from batch to batch")
    func lookupsIntoReusedBuffer() async throws {
        let store = try await temporarySQLiteStore()
        _ = try await store.put(workContext("a", version: 1))
        let (cache, _) = self.cache(store)
        let (first, second, sameStorage) = try await DedicatedThread.run(name: "test-worker") {
            var buffer: [ContextLookup] = []
            cache.lookups(["a", "b", "a", "c"], into: &buffer)  // misses, loaded
            // A context's version; -1: the user has none; -2: unavailable.
            let answers = { buffer.map { $0.hasNoContext ? -1 : $0.version ?? -2 } }
            let first = answers()
            let storage = buffer.withUnsafeBufferPointer { $0.baseAddress }
            cache.lookups(["b", "a"], into: &buffer)  // hits only, fewer positions
            let second = answers()
            return (first, second, storage == buffer.withUnsafeBufferPointer { $0.baseAddress })
        }
        #expect(first == [1, -1, 1, -1])
        #expect(second == [-1, 1])
        #expect(sameStorage)
    }

    @Test("bounded: CLOCK evicts entries not used since the hand's last pass")
    func eviction() async throws {
        let store = try await temporarySQLiteStore()
        let (cache, registry) = self.cache(store, maxEntries: 3)
        _ = try await cache.resolveOffPool(["u1", "u2", "u3"])
        _ = try await cache.resolveOffPool(["u1"])  // u1 is used again: it gets a second chance
        _ = try await cache.resolveOffPool(["u4"])
        #expect(cache.count == 3)
        #expect(metric(registry, "focusgate_context_cache_evictions_total") == 1)
        let misses = metric(registry, "focusgate_context_cache_misses_total")
        _ = try await cache.resolveOffPool(["u1"])
        #expect(metric(registry, "focusgate_context_cache_misses_total") == misses, "u1 survived the eviction")
        for index in 5..<50 { _ = try await cache.resolveOffPool(["u\(index)"]) }
        #expect(cache.count == 3)
    }

    @Test(
        "a load does not wait for Swift's cooperative pool: with every pool thread blocked, a worker's miss still loads in time",
        .blocksThePool
    )
    func loadWhilePoolBlocked() async throws {
        let sqlite = try await temporarySQLiteStore()
        _ = try await sqlite.put(workContext("u", version: 1))
        try await self.expectLoadWhilePoolBlocked(sqlite)
        try await self.withPrivatePostgres { _, postgres, _ in try await self.expectLoadWhilePoolBlocked(postgres) }
    }

    private func expectLoadWhilePoolBlocked(_ store: any ContextStore) async throws {
        let (cache, _) = self.cache(store, timeout: .milliseconds(800))
        _ = try await store.contexts(for: ["warm"])  // the store's connections are up
        let answer = try await DedicatedThread.run(name: "test-worker") {
            try PoolBlocker.whileBlocked { cache.resolve(["u"])["u"] }
        }
        #expect(answer?.version == 1, "\(type(of: store)): loaded, not context-unavailable")
    }

    @Test("invalidations: inline and reload apply newer versions; stale and uncached ones are ignored; tombstones drop")
    func invalidations() async throws {
        let store = try await temporarySQLiteStore()
        _ = try await store.put(workContext("u", version: 1))
        let (cache, registry) = self.cache(store)
        _ = try await cache.resolveOffPool(["u"])

        #expect(try await cache.applyOffPool(.inline(workContext("u", version: 2, accepts: "home"))).0 == .applied)
        #expect(try await cache.resolveOffPool(["u"])["u"]?.version == 2)
        #expect(try await cache.applyOffPool(.inline(workContext("u", version: 2))).0 == .stale)
        #expect(try await cache.applyOffPool(.reload(userID: "u", version: 1)).0 == .stale)
        #expect(try await cache.applyOffPool(.inline(workContext("stranger", version: 9))).0 == .notCached)

        _ = try await store.put(workContext("u", version: 5))
        let (outcome, reloaded) = try await cache.applyOffPool(.reload(userID: "u", version: 5))
        #expect(outcome == .applied && reloaded?.version == 5)

        #expect(try await cache.applyOffPool(.drop(userID: "u")).0 == .dropped)
        #expect(cache.count == 0)
        #expect(metric(registry, "focusgate_invalidations_total", labels: #"kind="stale""#) == 2)
        #expect(metric(registry, "focusgate_invalidations_total", labels: #"kind="applied""#) == 2)
    }

    @Test("a reload announcing a version the store does not have yet never lets the older context decide")
    func announcedNewerThanStore() async throws {
        let store = try await temporarySQLiteStore()
        _ = try await store.put(workContext("u", version: 1))
        let (cache, _) = self.cache(store)
        _ = try await cache.resolveOffPool(["u"])
        // The settings service announced version 2 before the store (a lagging replica) has it.
        #expect(try await cache.applyOffPool(.reload(userID: "u", version: 2)).0 == .unavailable)
        #expect(try await cache.resolveOffPool(["u"])["u"]?.isUnavailable == true)
        _ = try await store.put(workContext("u", version: 2))
        #expect(try await cache.resolveOffPool(["u"])["u"]?.version == 2)
    }

    @Test("PostgreSQL down: context-unavailable within the timeout and a metric; back up: recovered without restart")
    func storeOutage() async throws {
        try await self.withPrivatePostgres { server, store, database in
            let (cache, registry) = self.cache(store, timeout: .milliseconds(1500))

            try server.stopServer()
            let start = ContinuousClock.now
            let down = try await cache.resolveOffPool(["u"])
            #expect(down["u"]?.isUnavailable == true)
            #expect(ContinuousClock.now - start < .seconds(3))
            #expect(metric(registry, "focusgate_context_load_failures_total") >= 1)

            try server.startServer()
            try await Wait.until("the store answering again", timeout: .seconds(10)) {
                try await cache.resolveOffPool(["u"])["u"]?.version == 1
            }
        }
    }

    @Test("a store that hangs (a table lock) times out as context-unavailable; the partition keeps moving")
    func storeTimeout() async throws {
        try await self.withPrivatePostgres { server, store, database in
            let (cache, _) = self.cache(store, timeout: .milliseconds(300))

            let lock = try await server.psqlInBackground(
                "BEGIN; LOCK TABLE focus_contexts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(4); COMMIT;",
                database: database)
            try await self.waitForTableLock(server, database)
            let start = ContinuousClock.now
            #expect(try await cache.resolveOffPool(["u"])["u"]?.isUnavailable == true)
            #expect(ContinuousClock.now - start < .seconds(2), "the 300 ms timeout, not the 4 s lock")
            _ = await lock.exit()
            try await Wait.until("the context loaded once the lock is gone", timeout: .seconds(4)) {
                try await cache.resolveOffPool(["u"])["u"]?.version == 1
            }
        }
    }

    @Test("a load that timed out is still waited for before the store is closed, within a limit")
    func finishLoadsBeforeClose() async throws {
        try await self.withPrivatePostgres { server, store, database in
            let (cache, _) = self.cache(store, timeout: .milliseconds(300))
            #expect(await cache.finishLoads(within: .seconds(1)), "nothing in flight: done at once")

            let lock = try await server.psqlInBackground(
                "BEGIN; LOCK TABLE focus_contexts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT;",
                database: database)
            try await self.waitForTableLock(server, database)
            #expect(try await cache.resolveOffPool(["u"])["u"]?.isUnavailable == true)
            try await self.waitForBlockedLoad(server, database)
            let start = ContinuousClock.now
            #expect(!(await cache.finishLoads(within: .milliseconds(200))), "the timed-out load still runs")
            #expect(ContinuousClock.now - start < .seconds(2), "the limit holds")
            #expect(await cache.finishLoads(within: .seconds(20)), "and ends once the lock is gone")
            _ = await lock.exit()
        }
    }

    @Test("PostgreSQL: a call waiting for a pool connection stops waiting when its task is cancelled")
    func cancelledWaitForConnection() async throws {
        try await self.withPrivatePostgres { server, _, database in
            let store = try PostgresContextStore(
                url: server.url(database: database), maximumConnections: 1, logger: testLogger)
            // The pool's one connection is held by a load blocked on a table lock for 3 s.
            let lock = try await server.psqlInBackground(
                "BEGIN; LOCK TABLE focus_contexts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT;",
                database: database)
            try await self.waitForTableLock(server, database)
            let holding = Task.detached { try await store.context(for: "u") }
            try await self.waitForBlockedLoad(server, database)
            let waiting = Task.detached { try await store.context(for: "u") }
            let cancelledAt = ContinuousClock.now
            waiting.cancel()
            await #expect(throws: (any Error).self) { try await waiting.value }
            #expect(ContinuousClock.now - cancelledAt < .seconds(1), "not after the 3 s lock")
            #expect(try await holding.value?.version == 1)
            _ = await lock.exit()
            await store.close()
        }
    }

    @Test("a load racing with a newer invalidation never wins")
    func loadRace() async throws {
        try await self.withPrivatePostgres { server, store, database in
            let (cache, _) = self.cache(store, timeout: .seconds(5))

            // Hold the table so that the miss-load of "u" is in flight, then announce version 2.
            let lock = try await server.psqlInBackground(
                "BEGIN; LOCK TABLE focus_contexts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT;",
                database: database)
            try await self.waitForTableLock(server, database)
            let loading = Task.detached { try await cache.resolveOffPool(["u"])["u"] }
            try await self.waitForBlockedLoad(server, database)
            _ = try await cache.applyOffPool(.reload(userID: "u", version: 2))
            let raced = try await loading.value
            _ = await lock.exit()
            #expect(raced?.isUnavailable == true, "the version-1 load finished after version 2 was announced")
            #expect(
                try await cache.resolveOffPool(["u"])["u"]?.isUnavailable == true, "the store still has version 1 only")
            _ = try await store.put(workContext("u", version: 2))
            #expect(try await cache.resolveOffPool(["u"])["u"]?.version == 2)
        }
    }
}
