public import Prometheus

/// The cache's metrics, created once (names in docs/contract.md, Metrics).
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
        self.hits = registry.makeCounter(
            descriptor: .focusgate("context_cache_hits", unit: "total", "Context lookups answered from memory."))
        self.misses = registry.makeCounter(
            descriptor: .focusgate("context_cache_misses", unit: "total", "Context lookups that went to the store."))
        self.evictions = registry.makeCounter(
            descriptor: .focusgate(
                "context_cache_evictions", unit: "total", "Contexts evicted to stay within cache.maxEntries."))
        self.entries = registry.makeGauge(
            descriptor: .focusgate(
                "context_cache_entries", unit: "", "Contexts (and no-context entries) held in memory."))
        self.loadSeconds = registry.makeDurationHistogram(
            descriptor: .focusgate(
                "context_load", unit: "seconds", "Time to load one batch of contexts from the store."),
            buckets: [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2),
            ]
        )
        self.loadFailures = registry.makeCounter(
            descriptor: .focusgate(
                "context_load_failures", unit: "total",
                "Store loads that failed or timed out (decisions became context-unavailable)."))
        var invalidations: [ContextCache.InvalidationOutcome: Counter] = [:]
        for outcome in [ContextCache.InvalidationOutcome.applied, .dropped, .stale, .notCached, .unavailable, .invalid]
        {
            invalidations[outcome] = registry.makeCounter(
                descriptor: .focusgate("invalidations", unit: "total", "Invalidation messages by what they did."),
                labels: [("kind", outcome.rawValue)]
            )
        }
        self.invalidations = invalidations
    }

    func invalidation(_ outcome: ContextCache.InvalidationOutcome) -> Counter {
        self.invalidations[outcome]!
    }
}

extension MetricNameDescriptor {
    /// A `focusgate_<name>_<unit>` metric name with its help text.
    static func focusgate(_ name: String, unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "focusgate", metricName: name, unitName: unit, helpText: help)
    }
}
