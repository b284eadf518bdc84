import FocusGate
import FocusGateHarness
import Foundation
import Testing
import Yams

/// What can be validated here of the operations files: alert rules (promtool), the dashboard
/// (JSON), the compose file (`docker compose config`), the Kubernetes manifests (YAML, the
/// kustomization's resource list, and the settings an operator relies on).
@Suite("Operations files: dashboards, alerts, deploy")
struct OperationsFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.run(executable, arguments, workingDirectory: self.root.path)
        return (result.status, result.output + result.error)
    }

    static func tool(_ name: String) -> String? {
        ["/usr/bin/", "/usr/local/bin/", "/bin/"].map { $0 + name }.first(
            where: FileManager.default.isExecutableFile(atPath:))
    }

    static func yamlDocuments(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOf: self.root.appendingPathComponent(path), encoding: .utf8)
        return try Yams.load_all(yaml: text).compactMap { $0 as? [String: Any] }
    }

    @Test(
        "the alerts fire when and as their promtool unit tests say, with series as compose and the Kubernetes manifests scrape them"
    )
    func alertUnitTests() async throws {
        guard let promtool = Self.tool("promtool") else {
            Issue.record("promtool is not installed: make test installs it (apt-get install prometheus)")
            return
        }
        // The rules without their annotations (checked by promtool() above): the unit tests say
        // when each alert fires and with which labels, not its runbook's words again.
        var rules = try #require(try Self.yamlDocuments("dashboards/prometheus/alerts.yaml").first)
        rules["groups"] = (rules["groups"] as? [[String: Any]] ?? []).map { group in
            var group = group
            group["rules"] = (group["rules"] as? [[String: Any]] ?? []).map { rule in
                var rule = rule
                rule["annotations"] = nil
                return rule
            }
            return group
        }
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "focusgate-alerts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Yams.dump(object: rules).write(
            to: directory.appendingPathComponent("alerts.yaml"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            at: Self.root.appendingPathComponent("dashboards/prometheus/alerts.test.yaml"),
            to: directory.appendingPathComponent("alerts.test.yaml"))
        let result = try await Self.run(
            promtool, ["test", "rules", directory.appendingPathComponent("alerts.test.yaml").path])
        #expect(result.status == 0 && result.output.contains("SUCCESS"), "\(result.output)")
    }

    @Test("alert rules and the Prometheus configuration pass promtool (Debian's prometheus package)")
    func promtool() async throws {
        guard let promtool = Self.tool("promtool") else {
            Issue.record("promtool is not installed: make test installs it (apt-get install prometheus)")
            return
        }
        let rules = try await Self.run(promtool, ["check", "rules", "dashboards/prometheus/alerts.yaml"])
        #expect(rules.status == 0 && rules.output.contains("SUCCESS: 9 rules found"), "\(rules.output)")
        let config = try await Self.run(promtool, ["check", "config", "dashboards/prometheus/prometheus.yml"])
        #expect(config.status == 0, "\(config.output)")
        var alerts: Set<String> = []
        for document in try Self.yamlDocuments("dashboards/prometheus/alerts.yaml") {
            for group in document["groups"] as? [[String: Any]] ?? [] {
                for rule in group["rules"] as? [[String: Any]] ?? [] {
                    let annotations = rule["annotations"] as? [String: Any]
                    #expect(annotations?["runbook"] is String, "\(rule["alert"] ?? "?") says what to do")
                    if let name = rule["alert"] as? String { alerts.insert(name) }
                }
            }
        }
        // docs/contract.md's "Alerts" table names every rule, and no other.
        let section = try ProjectDocuments.section("Alerts")
        let documented = Set(
            section.split(separator: "\n").filter { $0.hasPrefix("| `") }.compactMap {
                $0.split(separator: "`").dropFirst().first.map(String.init)
            })
        #expect(
            documented == alerts,
            "documented only: \(documented.subtracting(alerts)); rules only: \(alerts.subtracting(documented))")
    }

    @Test("the dashboard is valid JSON with a panel for every operator question; provisioning parses")
    func dashboard() async throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("dashboards/focusgate.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let titles = (dashboard["panels"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }.joined(
            separator: "|"
        ).lowercased()
        for topic in [
            "decision", "silenced", "dead letters", "latency", "lag", "cache", "invalidations", "transactions",
            "rebalances", "instances",
        ] {
            #expect(titles.contains(topic), "a panel about \(topic)")
        }
        let provider = try #require(try Self.yamlDocuments("dashboards/provisioning/dashboards/focusgate.yaml").first)
        #expect((provider["providers"] as? [[String: Any]])?.first?["type"] as? String == "file")
        let datasource = try #require(
            try Self.yamlDocuments("dashboards/provisioning/datasources/prometheus.yaml").first)
        #expect((datasource["datasources"] as? [[String: Any]])?.first?["type"] as? String == "prometheus")
    }

    @Test("deploy/compose.yaml validates with docker compose config")
    func compose() async throws {
        let result: (status: Int32, output: String)
        if let docker = Self.tool("docker"), (try? await Self.run(docker, ["compose", "version"]))?.status == 0 {
            result = try await Self.run(docker, ["compose", "-f", "deploy/compose.yaml", "config", "--quiet"])
        } else if let compose = Self.tool("docker-compose") {
            result = try await Self.run(compose, ["-f", "deploy/compose.yaml", "config", "--quiet"])
        } else {
            Issue.record("neither docker compose nor docker-compose is installed: make test installs docker-compose")
            return
        }
        #expect(result.status == 0, "\(result.output)")
        let compose = try #require(try Self.yamlDocuments("deploy/compose.yaml").first)
        let services = try #require(compose["services"] as? [String: Any])
        #expect(Set(services.keys).isSuperset(of: ["kafka", "postgres", "focusgate", "prometheus", "grafana"]))
        let kafka = try #require(services["kafka"] as? [String: Any])
        #expect(
            (kafka["environment"] as? [String: Any])?["KAFKA_PROCESS_ROLES"] as? String == "broker,controller",
            "KRaft mode")
    }

    @Test("Kubernetes manifests: probes, grace period, budget, secret, and a configuration serve accepts")
    func kubernetes() async throws {
        // What `kubectl apply -k` reads: the kustomization names every manifest there is.
        let kustomization = try #require(try Self.yamlDocuments("deploy/kubernetes/kustomization.yaml").first)
        let resources = try #require(kustomization["resources"] as? [String])
        let manifests = try FileManager.default.contentsOfDirectory(
            atPath: Self.root.appendingPathComponent("deploy/kubernetes").path
        ).filter { $0.hasSuffix(".yaml") && $0 != "kustomization.yaml" }
        #expect(Set(resources) == Set(manifests) && resources.count == manifests.count)
        var documents: [String: [String: Any]] = [:]
        for file in resources {
            for document in try Self.yamlDocuments("deploy/kubernetes/\(file)") {
                documents[document["kind"] as? String ?? "?"] = document
            }
        }
        #expect(Set(documents.keys) == ["ConfigMap", "Secret", "StatefulSet", "Service", "PodDisruptionBudget"])
        // Stable pod names: stable instance names, so stable transactional ids (fencing).
        let statefulSet = try #require(documents["StatefulSet"]?["spec"] as? [String: Any])
        #expect(statefulSet["serviceName"] as? String == "focusgate-peers")
        let pod = try #require(
            (statefulSet["template"] as? [String: Any])?["spec"] as? [String: Any])
        #expect(
            (pod["terminationGracePeriodSeconds"] as? Int ?? 0) > 60,
            "longer than a graceful stop (commit and flush, 30 s each at most)")
        #expect((pod["securityContext"] as? [String: Any])?["runAsNonRoot"] as? Bool == true)
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        #expect(
            ((container["livenessProbe"] as? [String: Any])?["httpGet"] as? [String: Any])?["path"] as? String
                == "/healthz")
        #expect(
            ((container["readinessProbe"] as? [String: Any])?["httpGet"] as? [String: Any])?["path"] as? String
                == "/readyz")
        let secret = try #require(documents["Secret"]?["stringData"] as? [String: String])
        #expect(secret["FOCUSGATE_ADMIN_TOKEN"] != nil)
        #expect(documents["PodDisruptionBudget"]?["spec"] != nil)

        // The ConfigMap's file plus the Secret's variables make a configuration serve accepts.
        let file = try #require((documents["ConfigMap"]?["data"] as? [String: String])?["focusgate.yaml"])
        let configuration = try ServerConfiguration.load(yaml: file, environment: secret)
        #expect(
            configuration.storeKind == "postgres" && configuration.adminHost == "0.0.0.0"
                && !configuration.adminToken.isEmpty)

    }

    @Test("the image builds the release binary and runs it as a non-root user with librdkafka1 and jemalloc")
    func dockerfile() async throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        #expect(text.components(separatedBy: "\nFROM ").count >= 3, "multi-stage")
        #expect(text.contains("librdkafka1") && text.contains("USER 10001"))
        // The binary links jemalloc: built against libjemalloc-dev, run with libjemalloc2.
        #expect(text.contains("libjemalloc-dev") && text.contains("libjemalloc2"))
        #expect(
            text.contains("--config /etc/focusgate/focusgate.yaml")
                || text.contains(#""--config", "/etc/focusgate/focusgate.yaml""#))
    }

    @Test(
        "no script make test runs stops early under pipefail: nothing pipes into a reader that quits before its writer ends"
    )
    func scriptsWithoutEarlyReaders() throws {
        // `ls | head -1` under `set -o pipefail`: when ls needs more than one write, head may quit
        // in between, ls dies of SIGPIPE and the pipeline fails (exit 141), by chance and more
        // often the longer the clone's path. `grep -q`, `-m` and `-l` quit early the same way.
        let early = /(^|[^|])\|[ \t]*(head\b|grep[ \t]+(-[A-Za-z]*[qml]\b))/
        let folder = Self.root.appendingPathComponent("scripts")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sh") }
        let files = names.map { folder.appendingPathComponent($0) } + [Self.root.appendingPathComponent(".ci/run")]
        #expect(names.contains("fuzz.sh"))
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            guard text.contains("pipefail") else { continue }
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") && line.contains(early) {
                Issue.record("\(file.lastPathComponent):\(number + 1): \(line)")
            }
        }
    }
}
