public import Prometheus

/// The cache's metrics, created once (SPEC §10 names).
public struct ContextCacheMetrics: Sendable {
    let hits: Counter
    let misses: Counter
    let evictions: Counter
    let entries: Gauge
    let loadSeconds: DurationHistogram
    let loadFailures: Counter
    private let invalidations: [ContextCache.InvalidationOutcome: Counter]

    /// Registers the metrics in `registry`.
    public init(registry: PrometheusCollectorRegistry) {
        self.hits = registry.makeCounter(name: "focusgate_context_cache_hits_total", help: "Context lookups answered from memory.")
        self.misses = registry.makeCounter(name: "focusgate_context_cache_misses_total", help: "Context lookups that went to the store.")
        self.evictions = registry.makeCounter(name: "focusgate_context_cache_evictions_total", help: "Contexts evicted to stay within cache.maxEntries.")
        self.entries = registry.makeGauge(name: "focusgate_context_cache_entries", help: "Contexts (and no-context entries) held in memory.")
        self.loadSeconds = registry.makeDurationHistogram(
            name: "focusgate_context_load_seconds",
            buckets: [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2)],
            help: "Time to load one batch of contexts from the store."
        )
        self.loadFailures = registry.makeCounter(name: "focusgate_context_load_failures_total", help: "Store loads that failed or timed out (decisions became context-unavailable).")
        var invalidations: [ContextCache.InvalidationOutcome: Counter] = [:]
        for outcome in [ContextCache.InvalidationOutcome.applied, .dropped, .stale, .notCached, .unavailable, .invalid] {
            invalidations[outcome] = registry.makeCounter(
                name: "focusgate_invalidations_total", labels: [("kind", outcome.rawValue)],
                help: "Invalidation messages by what they did."
            )
        }
        self.invalidations = invalidations
    }

    func invalidation(_ outcome: ContextCache.InvalidationOutcome) -> Counter {
        self.invalidations[outcome]!
    }
}
