import FocusGateHarness
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

extension EmbeddedBrokerTests {
    /// The dashboard and alert rules only use metrics that `serve` really exposes.
    @Suite("Dashboards and alerts")
    struct DashboardTests {
        static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()

        /// Every `focusgate_*` name in a file, histogram series reduced to the histogram's name.
        static func metricNames(in path: String) throws -> Set<String> {
            let text = try String(contentsOf: self.root.appendingPathComponent(path), encoding: .utf8)
            let regex = try NSRegularExpression(pattern: "focusgate_[a-z_]+")
            let names = regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                String(text[Range($0.range, in: text)!])
            }
            return Set(
                names.map { name in
                    for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                        return String(name.dropLast(suffix.count))
                    }
                    return name
                })
        }

        /// The value of an unlabelled sample in a Prometheus exposition (0 when absent).
        static func sample(_ name: String, in exposition: String) -> Double {
            for line in exposition.split(separator: "\n") where line.hasPrefix(name + " ") {
                return Double(line.dropFirst(name.count + 1)) ?? 0
            }
            return 0
        }

        static let contractMetrics: Set<String> = [
            "focusgate_events_consumed_total", "focusgate_decisions_total", "focusgate_dlq_total",
            "focusgate_duplicates_total",
            "focusgate_badge_updates_total", "focusgate_invalidations_total", "focusgate_context_cache_entries",
            "focusgate_context_cache_hits_total", "focusgate_context_cache_misses_total",
            "focusgate_context_cache_evictions_total",
            "focusgate_context_load_seconds", "focusgate_decision_latency_seconds", "focusgate_transactions_total",
            "focusgate_consumer_lag", "focusgate_rebalances_total", "focusgate_commit_latency_seconds",
            "focusgate_producer_replacements_total", "focusgate_replay_backoff_seconds_total",
        ]

        @Test("serve exposes every metric of the contract and every metric the dashboard and alert rules use")
        func metricsExist() async throws {
            let bench = try await GatewayBench()
            let serve = try await ServeProcess(bench)
            #expect(try await serve.waitUntilReady())
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(serve.adminPort)/v1/users/u-1/context")!)
            request.httpMethod = "PUT"
            request.httpBody = Data(
                #"{"userId":"u-1","version":1,"focus":"Work","apps":{"chat":{"filterPredicate":"SELF == 'work'"}}}"#
                    .utf8)
            _ = try await URLSession.shared.data(for: request)
            try bench.send([
                Events.notification("n-1", user: "u-1", criteria: "work"),
                Events.notification("n-1", user: "u-1", criteria: "work"),
                Events.notification("n-2", user: "u-2"), ("u-3", "not json"),
            ])
            // Consumer lag comes from librdkafka's statistics, emitted every 5 s once partitions
            // are assigned (the embedded broker's first join takes seconds; longer on a busy machine).
            let exposition = try await Wait.for(
                "consumer lag and the duplicate in /metrics", timeout: .seconds(60),
                {
                    let (data, _) = try await URLSession.shared.data(
                        from: URL(string: "http://127.0.0.1:\(serve.adminPort)/metrics")!)
                    return String(decoding: data, as: UTF8.self)
                }
            ) {
                $0.contains("focusgate_consumer_lag{") && $0.contains("focusgate_duplicates_total 1")
                    && Self.sample("focusgate_commit_latency_seconds_count", in: $0) >= 4
            }
            let exposed = Set(
                exposition.split(separator: "\n").compactMap { line -> String? in
                    guard line.hasPrefix("# TYPE ") else { return nil }
                    return line.split(separator: " ").dropFirst(2).first.map(String.init)
                })
            let used = try Self.metricNames(in: "dashboards/focusgate.json").union(
                Self.metricNames(in: "dashboards/prometheus/alerts.yaml"))
            #expect(used.count >= 14)
            #expect(used.subtracting(exposed).isEmpty, "used but not exposed: \(used.subtracting(exposed).sorted())")
            #expect(
                Self.contractMetrics.subtracting(exposed).isEmpty,
                "metrics of the contract missing: \(Self.contractMetrics.subtracting(exposed).sorted())")
            #expect(exposition.contains("focusgate_ready 1"))
            #expect(exposition.contains(#"focusgate_decisions_total{decision="delivered",reason="predicate-match"} 1"#))
            #expect(exposition.contains(#"focusgate_dlq_total{error="invalid-json"} 1"#))
            #expect(!exposition.contains("u-1"), "no user ids in labels")
            #expect(await serve.stop(SIGTERM) == 0)
            await bench.shutdown()
        }
    }
}
