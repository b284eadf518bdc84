import Dispatch
import Foundation
public import FocusGateCore
public import FocusGateStore
public import Logging
import Synchronization

/// The bounded in-memory cache of compiled Focus contexts (docs/contract.md, Invalidations and the context store), in front of the store.
///
/// - "This user has no context" is cached too: most users have no Focus on.
/// - Bounded by ``Configuration/maxEntries`` with CLOCK (second-chance) eviction: a hit sets a
///   bit, the eviction hand clears bits until it finds an entry not used since its last pass.
/// - Version rules: an invalidation or context not newer than the applied version is ignored; a
///   context older than the newest version announced by an invalidation is never returned (the
///   user is reloaded, and if the store still has the older version the decision is
///   `context-unavailable`); a load that races with a newer invalidation never wins.
/// - Misses of one batch are loaded with one store query; a store that fails or exceeds
///   ``Configuration/loadTimeout`` yields `.unavailable` for those users and is retried on the
///   next batch, so recovery needs no restart.
///
/// One lock acquisition per batch (``resolve(_:)``), never per event.
public final class ContextCache: Sendable {
    /// Now, from which a context with schedules has its Focus worked out ahead (a lookup per
    /// decision instead of a time-zone computation); decisions are the same either way.
    static func horizonStart() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Cache settings.
    public struct Configuration: Sendable {
        /// Contexts (and "no context" entries) held in memory (`cache.maxEntries`). Default: `1_000_000`.
        public var maxEntries: Int = 1_000_000
        /// How long a batch waits for the store before deciding `context-unavailable`. Default: `2` seconds.
        public var loadTimeout: Duration = .seconds(2)

        public init() {}
    }

    private let store: any ContextStore
    private let configuration: Configuration
    private let state: Mutex<State>
    private let metrics: ContextCacheMetrics
    private let logger: Logger
    /// Store loads still running, a timed-out one included (its task outlives the wait).
    private let loads = LoadsInFlight()

    /// Creates an empty cache over `store`.
    public init(
        store: any ContextStore, configuration: Configuration = .init(), metrics: ContextCacheMetrics, logger: Logger
    ) {
        precondition(configuration.maxEntries > 0, "cache.maxEntries must be positive")
        self.store = store
        self.configuration = configuration
        self.state = Mutex(State(capacity: configuration.maxEntries))
        self.metrics = metrics
        self.logger = logger
    }

    /// Entries currently held.
    public var count: Int { self.state.withLock { $0.index.count } }

    // MARK: - Decisions

    /// The contexts of a batch's users: hits from memory, misses loaded together from the store.
    /// Blocks the calling (worker) thread for at most ``Configuration/loadTimeout``.
    ///
    /// Call it from a dedicated thread (a worker, the listener), never from Swift's cooperative
    /// pool: it blocks its thread while the load runs (on the cache's own load threads).
    public func resolve(_ userIDs: some Sequence<String>) -> [UserID: ContextLookup] {
        let users = Array(userIDs)
        return Dictionary(zip(users.map { UserID($0) }, self.lookups(users)), uniquingKeysWith: { first, _ in first })
    }

    /// ``resolve(_:)`` for the hot path: one lookup per position of `userIDs` (repeats allowed),
    /// so the caller needs no dictionary.
    public func lookups(_ userIDs: [String]) -> [ContextLookup] {
        var result: [ContextLookup] = []
        self.lookups(userIDs, into: &result)
        return result
    }

    /// ``lookups(_:)`` into `result`, replacing its contents and keeping its storage: a worker
    /// passes the same buffer for every batch instead of allocating one per batch, and, when it
    /// has them, the ids' ``IdentifierIndex/hash(_:)`` by position in `hashes` (it hashes each
    /// record's user id once, for this and for its partition state).
    public func lookups(_ userIDs: [String], hashes: [UInt64]? = nil, into result: inout [ContextLookup]) {
        result.removeAll(keepingCapacity: true)
        guard !userIDs.isEmpty else { return }
        precondition(hashes.map { $0.count == userIDs.count } ?? true, "one hash per user id")
        result.reserveCapacity(userIDs.count)
        var misses: [String] = []
        var missPositions: [UserID: [Int]] = [:]
        var hits = 0
        self.state.withLock { state in
            for (position, userID) in userIDs.enumerated() {
                if let slot = state.slot(of: userID, hash: hashes?[position]), !state.slots[slot].mustReload {
                    state.slots[slot].referenced = true
                    result.append(.available(state.slots[slot].context))
                    hits += 1
                    continue
                }
                result.append(.unavailable)
                let key = UserID(userID)
                if missPositions[key] != nil {
                    missPositions[key]!.append(position)
                } else {
                    missPositions[key] = [position]
                    misses.append(userID)
                    // In flight: invalidations arriving during the load raise this announced version.
                    state.loading[key] = state.loading[key] ?? state.pendingAnnouncements[key] ?? -1
                }
            }
        }
        self.metrics.hits.increment(by: Int64(hits))
        guard !misses.isEmpty else { return }
        self.metrics.misses.increment(by: Int64(misses.count))
        let loaded = self.loadBlocking(misses)
        self.state.withLock { state in
            for userID in misses {
                let lookup = self.settle(userID, loaded: loaded, state: &state)
                for position in missPositions[UserID(userID)]! { result[position] = lookup }
            }
            self.metrics.entries.set(Double(state.index.count))
        }
    }

    /// Applies a load's answer for one missed user under the lock: the lookup to decide with.
    private func settle(_ userID: String, loaded: [UserID: FocusContext]?, state: inout State) -> ContextLookup {
        let key = UserID(userID)
        let announced = max(
            state.loading.removeValue(forKey: key) ?? -1,
            state.slot(of: userID).map { state.slots[$0].announced } ?? -1
        )
        guard let loaded else { return .unavailable }
        let context = loaded[key]
        if announced >= 0 && (context?.version ?? -1) < announced {
            // The store lags behind an invalidation: never decide with an older context,
            // now or on a later load, until the store has the announced version.
            state.pendingAnnouncements[key] = announced
            return .unavailable
        }
        state.pendingAnnouncements[key] = nil
        do {
            let compiled = try context.map { (context) throws(FocusContextError) in
                try state.compiler.compile(context, horizonFrom: Self.horizonStart())
            }
            state.insert(userID: userID, context: compiled, version: context?.version ?? -1, metrics: self.metrics)
            return .available(compiled)
        } catch {
            self.logger.error(
                "stored context does not compile", metadata: ["focusgate.user": "\(userID)", "error": "\(error)"])
            return .unavailable
        }
    }

    // MARK: - Invalidations

    /// What an invalidation asks, with the outcome reported back.
    public enum InvalidationOutcome: String, Sendable {
        /// A cached user's context was replaced (inline or reloaded).
        case applied
        /// The user was dropped from the cache (tombstone).
        case dropped
        /// Not newer than what is applied: ignored.
        case stale
        /// The user is not cached: nothing to do (their next notification loads from the store).
        case notCached = "not-cached"
        /// The reload could not reach the store; the user stays marked for reload.
        case unavailable
        /// An inline context that does not validate.
        case invalid
    }

    /// Applies one invalidation. Reloads block the calling (listener) thread for at most
    /// ``Configuration/loadTimeout``.
    ///
    /// - Returns: What happened, and the user's new context when it changed.
    public func apply(_ invalidation: ContextInvalidation) -> (InvalidationOutcome, CompiledFocusContext?) {
        let outcome = self.applyCounting(invalidation)
        self.metrics.invalidation(outcome.0).increment()
        return outcome
    }

    /// Counts an invalidation record that could not be read.
    public func recordInvalidInvalidation() {
        self.metrics.invalidation(.invalid).increment()
    }

    private func applyCounting(_ invalidation: ContextInvalidation) -> (InvalidationOutcome, CompiledFocusContext?) {
        switch invalidation {
        case .drop(let userID):
            let dropped = self.state.withLock { state in
                state.loading[UserID(userID)] = nil
                state.pendingAnnouncements[UserID(userID)] = nil
                return state.remove(userID: userID)
            }
            return (dropped ? .dropped : .notCached, nil)

        case .inline(let context):
            do {
                try context.validate()
            } catch {
                return (.invalid, nil)
            }
            return self.state.withLock { state -> (InvalidationOutcome, CompiledFocusContext?) in
                if let announced = state.loading[UserID(context.userID)] {
                    state.loading[UserID(context.userID)] = max(announced, context.version)
                }
                guard let slot = state.slot(of: context.userID) else { return (.notCached, nil) }
                guard context.version > state.slots[slot].version, context.version >= state.slots[slot].announced else {
                    return (.stale, nil)
                }
                guard let compiled = try? state.compiler.compile(context, horizonFrom: Self.horizonStart()) else {
                    return (.invalid, nil)
                }
                state.slots[slot].context = compiled
                state.slots[slot].version = context.version
                state.slots[slot].announced = context.version
                state.slots[slot].mustReload = false
                return (.applied, compiled)
            }

        case .reload(let userID, let version):
            let cached = self.state.withLock { state -> Bool? in
                if let announced = state.loading[UserID(userID)] {
                    state.loading[UserID(userID)] = max(announced, version)
                }
                guard let slot = state.slot(of: userID) else { return nil }
                guard version > state.slots[slot].version else { return false }
                state.slots[slot].announced = max(state.slots[slot].announced, version)
                state.slots[slot].mustReload = true
                return true
            }
            switch cached {
            case nil: return (.notCached, nil)
            case false?: return (.stale, nil)
            case true?: break
            }
            guard let loaded = self.loadBlocking([userID]) else { return (.unavailable, nil) }
            let context = loaded[UserID(userID)]
            return self.state.withLock { state -> (InvalidationOutcome, CompiledFocusContext?) in
                guard let slot = state.slot(of: userID) else { return (.notCached, nil) }
                let announced = state.slots[slot].announced
                if !state.slots[slot].mustReload && state.slots[slot].version >= announced {
                    // A batch's miss-load got the announced version first: it is applied all the same.
                    return (.applied, state.slots[slot].context)
                }
                guard let context, context.version >= announced, context.version > state.slots[slot].version,
                    let compiled = try? state.compiler.compile(context, horizonFrom: Self.horizonStart())
                else {
                    // The store does not have the announced version yet: keep the user marked for reload.
                    return (.unavailable, nil)
                }
                state.slots[slot].context = compiled
                state.slots[slot].version = context.version
                state.slots[slot].mustReload = false
                return (.applied, compiled)
            }
        }
    }

    // MARK: - Store access

    /// Waits until no store load is running, at most `limit`: a load that timed out goes on in
    /// the background, and the store must not be closed under it.
    ///
    /// - Returns: Whether every load finished in time.
    public func finishLoads(within limit: Duration) async -> Bool {
        let loads = self.loads
        return await firstAnswer(within: limit, orElse: false) { await loads.idle() }
    }

    /// Loads users from the store with a deadline; `nil` when the store failed or timed out.
    private func loadBlocking(_ userIDs: [String]) -> [UserID: FocusContext]? {
        let box = LoadResult()
        let semaphore = DispatchSemaphore(value: 0)
        let store = self.store
        let start = ContinuousClock.now
        let loads = self.loads
        loads.begin()
        let task = Task(executorPreference: Self.loadThreads) {
            defer { loads.end() }
            do {
                box.set(try await store.contexts(for: userIDs))
            } catch let error as ContextStoreError {
                box.fail(error)
            } catch {
                box.fail(ContextStoreError(code: "unavailable", message: "\(error)"))
            }
            semaphore.signal()
        }
        let deadline = DispatchTime.now() + .nanoseconds(Int(self.configuration.loadTimeout.wholeNanoseconds))
        if semaphore.wait(timeout: deadline) == .timedOut {
            task.cancel()
            self.metrics.loadFailures.increment()
            self.logger.warning("context store timed out", metadata: ["focusgate.users": "\(userIDs.count)"])
            return nil
        }
        self.metrics.loadSeconds.record(ContinuousClock.now - start)
        switch box.value {
        case .success(let contexts)?:
            return contexts
        case .failure(let error)?:
            self.metrics.loadFailures.increment()
            self.logger.warning("context store failed", metadata: ["error": "\(error)"])
            return nil
        case nil:
            return nil
        }
    }
}

/// How many store loads are running, and who waits for there to be none.
private final class LoadsInFlight: Sendable {
    private struct State {
        var running = 0
        var nextWaiter = 0
        var waiting: [Int: CheckedContinuation<Bool, Never>] = [:]
    }

    private let state = Mutex(State())

    func begin() { self.state.withLock { $0.running += 1 } }

    func end() {
        let waiting = self.state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(returning: true) }
    }

    /// `true` once no load is running; `false` when the waiting task is cancelled first.
    func idle() async -> Bool {
        let waiter = self.state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = self.state.withLock { state -> Bool? in
                    if state.running == 0 { return true }
                    if Task.isCancelled { return false }
                    state.waiting[waiter] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            self.state.withLock { $0.waiting.removeValue(forKey: waiter) }?.resume(returning: false)
        }
    }
}

/// One load's outcome, handed from the loading task to the waiting thread.
private final class LoadResult: Sendable {
    private let result = Mutex<Result<[UserID: FocusContext], ContextStoreError>?>(nil)
    func set(_ value: [UserID: FocusContext]) { self.result.withLock { $0 = .success(value) } }
    func fail(_ error: ContextStoreError) { self.result.withLock { $0 = .failure(error) } }
    var value: Result<[UserID: FocusContext], ContextStoreError>? { self.result.withLock { $0 } }
}

extension Duration {
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
