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

        /// A metric as docs/contract.md's "Metrics" table describes it, or as `serve` exposes it.
        struct Metric: Equatable, CustomStringConvertible {
            var type: String
            var labels: [String]
            var help: String
            var description: String { "\(self.type) \(self.labels) \"\(self.help)\"" }
        }

        /// Exposed only with the benchmarks' allocation counter preloaded.
        static let benchmarkOnly: Set<String> = ["focusgate_worker_allocations_total"]

        /// The rows of docs/contract.md's "Metrics" table: name, type (labels), meaning.
        static func contractMetrics() throws -> [String: Metric] {
            let section = try ProjectDocuments.section("Metrics")
            var metrics: [String: Metric] = [:]
            for line in section.split(separator: "\n") where line.hasPrefix("| `focusgate_") {
                let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                guard cells.count == 3 else {
                    Issue.record("a row of three cells: \(line)")
                    continue
                }
                let name = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                let type = String(cells[1].prefix { $0 != " " })
                let labels =
                    cells[1].firstIndex(of: "(").map { open in
                        cells[1][cells[1].index(after: open)...].dropLast().split(separator: ",").map {
                            $0.trimmingCharacters(in: .whitespaces)
                        }
                    } ?? []
                metrics[name] = Metric(type: type, labels: labels.sorted(), help: cells[2])
            }
            return metrics
        }

        /// The metrics of a Prometheus exposition: `# TYPE`, `# HELP` and the label names of its
        /// samples (a histogram's `le` left out).
        static func exposedMetrics(_ exposition: String) -> [String: Metric] {
            var metrics: [String: Metric] = [:]
            for line in exposition.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                if line.hasPrefix("# TYPE "), parts.count == 4 {
                    metrics[parts[2], default: Metric(type: "", labels: [], help: "")].type = parts[3]
                } else if line.hasPrefix("# HELP "), parts.count == 4 {
                    metrics[parts[2], default: Metric(type: "", labels: [], help: "")].help = parts[3]
                        .replacingOccurrences(of: "|", with: "/")
                } else if !line.hasPrefix("#"), let brace = line.firstIndex(of: "{") {
                    var name = String(line[..<brace])
                    for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) && metrics[name] == nil {
                        name = String(name.dropLast(suffix.count))
                    }
                    let labels = line[line.index(after: brace)...].prefix { $0 != "}" }.split(separator: ",").compactMap
                    {
                        $0.split(separator: "=").first.map(String.init)
                    }.filter { $0 != "le" }
                    let known = Set(metrics[name]?.labels ?? [])
                    metrics[name]?.labels = known.union(labels).sorted()
                }
            }
            return metrics
        }

        @Test("serve exposes every metric of the contract and every metric the dashboard and alert rules use")
        func metricsExist() async throws {
            let bench = try await GatewayBench()
            let serve = try await ServeProcess(bench)
            #expect(try await serve.waitUntilReady())
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(serve.adminPort)/v1/users/u-1/context")!)
            request.httpMethod = "PUT"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
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
                "consumer lag, the duplicate and commits in /metrics", timeout: .seconds(60),
                {
                    let (data, _) = try await URLSession.shared.data(
                        from: URL(string: "http://127.0.0.1:\(serve.adminPort)/metrics")!)
                    return String(decoding: data, as: UTF8.self)
                }
            ) {
                $0.contains("focusgate_consumer_lag{") && $0.contains("focusgate_duplicates_total 1")
                    && Self.sample("focusgate_commit_latency_seconds_count", in: $0) >= 4
                    && Self.sample("focusgate_commit_duration_seconds_count", in: $0) >= 1
            }
            let exposedMetrics = Self.exposedMetrics(exposition)
            let exposed = Set(exposedMetrics.keys)
            let used = try Self.metricNames(in: "dashboards/focusgate.json").union(
                Self.metricNames(in: "dashboards/prometheus/alerts.yaml"))
            #expect(used.count >= 14)
            #expect(used.subtracting(exposed).isEmpty, "used but not exposed: \(used.subtracting(exposed).sorted())")
            // The contract's table and the running instance, both ways.
            let contract = try Self.contractMetrics()
            #expect(contract.count >= 30)
            let undocumented = exposed.subtracting(contract.keys).sorted()
            #expect(undocumented.isEmpty, "exposed but not in docs/contract.md's Metrics table: \(undocumented)")
            let missing = Set(contract.keys).subtracting(exposed).subtracting(Self.benchmarkOnly).sorted()
            #expect(missing.isEmpty, "in docs/contract.md's Metrics table but not exposed: \(missing)")
            for (name, documented) in contract.sorted(by: { $0.key < $1.key }) {
                guard let actual = exposedMetrics[name] else { continue }
                #expect(actual == documented, "\(name): exposed as \(actual), documented as \(documented)")
            }
            #expect(exposition.contains("focusgate_ready 1"))
            #expect(exposition.contains(#"focusgate_decisions_total{decision="delivered",reason="predicate-match"} 1"#))
            #expect(exposition.contains(#"focusgate_dlq_total{error="invalid-json"} 1"#))
            #expect(!exposition.contains("u-1"), "no user ids in labels")
            #expect(await serve.stop(SIGTERM) == 0)
            await bench.shutdown()
        }
    }
}
