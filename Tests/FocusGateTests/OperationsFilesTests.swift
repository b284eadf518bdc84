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

    /// Compose with the admin token it requires set, as an operator starts it.
    static func composeConfig(_ executable: String, _ arguments: [String]) async throws -> (
        status: Int32, output: String
    ) {
        let result = try await ChildProcess.run(
            executable, arguments, environment: ["FOCUSGATE_ADMIN_TOKEN": Self.adminToken],
            workingDirectory: self.root.path)
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
        "the alerts fire when and as their promtool unit tests say, annotations included, with series as compose and the Kubernetes manifests scrape them"
    )
    func alertUnitTests() async throws {
        guard let promtool = Self.tool("promtool") else {
            Issue.record("promtool is not installed: make test installs it (apt-get install prometheus)")
            return
        }
        // The shipped test file, unchanged, on the shipped rules.
        let result = try await ChildProcess.run(
            promtool, ["test", "rules", "alerts.test.yaml"],
            workingDirectory: Self.root.appendingPathComponent("dashboards/prometheus").path)
        #expect(result.status == 0 && result.output.contains("SUCCESS"), "\(result.output)\(result.error)")
        // Every rule is tested, and every expected alert says which annotations it carries.
        let tests = try #require(try Self.yamlDocuments("dashboards/prometheus/alerts.test.yaml").first)
        var tested: Set<String> = []
        for test in tests["tests"] as? [[String: Any]] ?? [] {
            for check in test["alert_rule_test"] as? [[String: Any]] ?? [] {
                let name = check["alertname"] as? String ?? "?"
                tested.insert(name)
                for alert in check["exp_alerts"] as? [[String: Any]] ?? [] {
                    let annotations = alert["exp_annotations"] as? [String: Any] ?? [:]
                    #expect(
                        Set(annotations.keys) == ["summary", "description", "runbook_url"],
                        "\(name): the annotations asserted")
                }
            }
        }
        #expect(tested == Set(try Self.alertRules().keys), "a unit test for every rule")
    }

    /// The alert rules of dashboards/prometheus/alerts.yaml, by name.
    static func alertRules() throws -> [String: [String: Any]] {
        var rules: [String: [String: Any]] = [:]
        for document in try self.yamlDocuments("dashboards/prometheus/alerts.yaml") {
            for group in document["groups"] as? [[String: Any]] ?? [] {
                for rule in group["rules"] as? [[String: Any]] ?? [] {
                    if let name = rule["alert"] as? String { rules[name] = rule }
                }
            }
        }
        return rules
    }

    @Test(
        "alert rules and the Prometheus configuration pass promtool (Debian's prometheus package); every rule has a summary, a description and a runbook_url into docs/runbook.md"
    )
    func promtool() async throws {
        guard let promtool = Self.tool("promtool") else {
            Issue.record("promtool is not installed: make test installs it (apt-get install prometheus)")
            return
        }
        let rules = try await Self.run(promtool, ["check", "rules", "dashboards/prometheus/alerts.yaml"])
        #expect(rules.status == 0 && rules.output.contains("SUCCESS: 12 rules found"), "\(rules.output)")
        let config = try await Self.run(promtool, ["check", "config", "dashboards/prometheus/prometheus.yml"])
        #expect(config.status == 0, "\(config.output)")
        let runbook = try String(contentsOf: Self.root.appendingPathComponent("docs/runbook.md"), encoding: .utf8)
        let anchors = Set(
            runbook.split(separator: "\n").filter { $0.hasPrefix("## ") }.map { $0.dropFirst(3).lowercased() })
        let alerts = try Self.alertRules()
        for (name, rule) in alerts {
            let annotations = rule["annotations"] as? [String: Any]
            #expect(
                annotations?["summary"] is String && annotations?["description"] is String, "\(name) says what to do")
            let url = annotations?["runbook_url"] as? String ?? ""
            #expect(
                url == "https://focusgate.example.com/docs/runbook.md#\(name.lowercased())"
                    && anchors.contains(name.lowercased()),
                "\(name): runbook_url \(url) names its section of docs/runbook.md")
        }
        // docs/contract.md's "Alerts" table names every rule, and no other.
        let section = try ProjectDocuments.section("Alerts")
        let documented = Set(
            section.split(separator: "\n").filter { $0.hasPrefix("| `") }.compactMap {
                $0.split(separator: "`").dropFirst().first.map(String.init)
            })
        let names = Set(alerts.keys)
        #expect(
            documented == names,
            "documented only: \(documented.subtracting(names)); rules only: \(names.subtracting(documented))")
    }

    @Test(
        "no type in Sources has more than 15 stored properties but the listed exceptions, each held at what it has (make lint's count)"
    )
    func storedProperties() async throws {
        let python = try #require(Self.tool("python3"))
        let result = try await Self.run(python, ["scripts/stored-properties.py"])
        #expect(result.status == 0, "\(result.output)")
        let report = try await Self.run(python, ["scripts/stored-properties.py", "--report"])
        #expect(
            report.output.contains(/\d+ PartitionState \(/), "the counter reads the aggregate: \(report.output)")
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
            result = try await Self.composeConfig(
                docker, ["compose", "-f", "deploy/compose.yaml", "config", "--quiet"])
        } else if let compose = Self.tool("docker-compose") {
            result = try await Self.composeConfig(compose, ["-f", "deploy/compose.yaml", "config", "--quiet"])
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

    /// A token `serve` accepts beyond loopback, for the manifests' and compose's Secret.
    static let adminToken = "9b2f61c04e8d7a35f1c6e02b8d4a7f93"

    @Test(
        "Kubernetes manifests: a pod that passes the restricted policy, a NetworkPolicy, a PodMonitor, the shipped alerts as a PrometheusRule, a generated ConfigMap serve accepts, no Secret"
    )
    func kubernetes() async throws {
        // What `kubectl apply -k` reads: the kustomization names every manifest there is.
        let kustomization = try #require(try Self.yamlDocuments("deploy/kubernetes/kustomization.yaml").first)
        let resources = try #require(kustomization["resources"] as? [String])
        let generators = try #require(kustomization["configMapGenerator"] as? [[String: Any]])
        let generated = generators.flatMap { $0["files"] as? [String] ?? [] }
        #expect(generated == ["focusgate.yaml"], "the ConfigMap is generated: a change renames it and rolls the pods")
        let manifests = try FileManager.default.contentsOfDirectory(
            atPath: Self.root.appendingPathComponent("deploy/kubernetes").path
        ).filter { $0.hasSuffix(".yaml") && $0 != "kustomization.yaml" }
        #expect(Set(resources + generated) == Set(manifests) && resources.count + generated.count == manifests.count)
        var documents: [String: [String: Any]] = [:]
        for file in resources {
            for document in try Self.yamlDocuments("deploy/kubernetes/\(file)") {
                documents[document["kind"] as? String ?? "?"] = document
            }
        }
        #expect(
            Set(documents.keys) == [
                "StatefulSet", "Service", "PodDisruptionBudget", "NetworkPolicy", "PodMonitor", "PrometheusRule",
            ], "no Secret: a placeholder must never go live with kubectl apply -k")
        let images = try #require(kustomization["images"] as? [[String: Any]])
        #expect(images.first?["newTag"] as? String == FocusGateRelease.version, "the release's image")

        // Stable pod names: stable instance names, so stable transactional ids (fencing).
        let statefulSet = try #require(documents["StatefulSet"]?["spec"] as? [String: Any])
        #expect(statefulSet["serviceName"] as? String == "focusgate-peers")
        let pod = try #require(
            (statefulSet["template"] as? [String: Any])?["spec"] as? [String: Any])
        #expect(
            (pod["terminationGracePeriodSeconds"] as? Int ?? 0) > 60,
            "longer than a graceful stop (commit and flush, 30 s each at most)")
        #expect(pod["automountServiceAccountToken"] as? Bool == false)
        let security = try #require(pod["securityContext"] as? [String: Any])
        #expect(security["runAsNonRoot"] as? Bool == true)
        #expect((security["seccompProfile"] as? [String: Any])?["type"] as? String == "RuntimeDefault")
        let spread = pod["topologySpreadConstraints"] as? [[String: Any]] ?? []
        #expect(spread.contains { $0["topologyKey"] as? String == "kubernetes.io/hostname" })
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        #expect(
            ((container["livenessProbe"] as? [String: Any])?["httpGet"] as? [String: Any])?["path"] as? String
                == "/healthz")
        #expect(
            ((container["readinessProbe"] as? [String: Any])?["httpGet"] as? [String: Any])?["path"] as? String
                == "/readyz")
        let containerSecurity = try #require(container["securityContext"] as? [String: Any])
        #expect(containerSecurity["allowPrivilegeEscalation"] as? Bool == false)
        #expect((containerSecurity["capabilities"] as? [String: Any])?["drop"] as? [String] == ["ALL"])
        let resourcesOfPod = try #require(container["resources"] as? [String: Any])
        #expect(
            (resourcesOfPod["limits"] as? [String: Any])?["memory"] as? String == "4Gi"
                && (resourcesOfPod["requests"] as? [String: Any])?["memory"] as? String == "4Gi",
            "the memory docs/operations.md sizes for the default workload, requested as it is limited")
        let ports = (container["ports"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }

        // Scraped by the Prometheus Operator on the container's admin port; alerts as shipped.
        let endpoints = (documents["PodMonitor"]?["spec"] as? [String: Any])?["podMetricsEndpoints"] as? [[String: Any]]
        #expect(endpoints?.first?["port"] as? String == "admin" && ports.contains("admin"))
        #expect(endpoints?.first?["path"] as? String == "/metrics")
        let shipped = try #require(try Self.yamlDocuments("dashboards/prometheus/alerts.yaml").first)
        let ruleGroups = (documents["PrometheusRule"]?["spec"] as? [String: Any])?["groups"]
        #expect(
            try Self.canonical(ruleGroups as Any) == Self.canonical(shipped["groups"] as Any),
            "deploy/kubernetes/prometheusrule.yaml holds dashboards/prometheus/alerts.yaml's groups unchanged")

        // The admin port from the namespace and Prometheus only; out to DNS, Kafka, PostgreSQL, the peers.
        let policy = try #require(documents["NetworkPolicy"]?["spec"] as? [String: Any])
        #expect(Set(policy["policyTypes"] as? [String] ?? []) == ["Ingress", "Egress"])
        let ingressPorts = (policy["ingress"] as? [[String: Any]] ?? []).flatMap {
            ($0["ports"] as? [[String: Any]] ?? []).compactMap { $0["port"] as? Int }
        }
        #expect(ingressPorts == [8080])
        let egressPorts = Set(
            (policy["egress"] as? [[String: Any]] ?? []).flatMap {
                ($0["ports"] as? [[String: Any]] ?? []).compactMap { $0["port"] as? Int }
            })
        #expect(egressPorts.isSuperset(of: [53, 9092, 5432, 8080]))

        // The generated ConfigMap's file plus the Secret's variables make a configuration serve
        // accepts, and serve refuses the placeholder an operator might leave in the Secret.
        let file = try String(
            contentsOf: Self.root.appendingPathComponent("deploy/kubernetes/focusgate.yaml"), encoding: .utf8)
        let secret = [
            "FOCUSGATE_ADMIN_TOKEN": Self.adminToken,
            "FOCUSGATE_STORE_POSTGRES_URL": "postgres://focusgate:p@postgres:5432/focusgate?sslmode=verify-full",
            "FOCUSGATE_KAFKA_PROPERTIES_SASL_PASSWORD": "p",
        ]
        let configuration = try ServerConfiguration.load(yaml: file, environment: secret)
        #expect(configuration.storeKind == "postgres" && configuration.adminHost == "0.0.0.0")
        #expect(configuration.kafkaProperties["queued.max.messages.kbytes"] == "262144")
        #expect {
            try ServerConfiguration.load(
                yaml: file, environment: secret.merging(["FOCUSGATE_ADMIN_TOKEN": "change-me"]) { $1 })
        } throws: { ($0 as? ServerConfiguration.Error)?.key == "admin.token" }
    }

    /// `value` as JSON with sorted keys, to compare parsed YAML documents.
    static func canonical(_ value: Any) throws -> Data {
        try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
    }

    @Test(
        "the Kubernetes manifests pass kubernetes-validate's schemas (strict), each file and, where kubectl is installed, as kustomize renders them"
    )
    func kubernetesSchemas() async throws {
        let validator = try PythonTools.path("kubernetes-validate")
        let folder = "deploy/kubernetes/"
        let kustomization = try #require(try Self.yamlDocuments(folder + "kustomization.yaml").first)
        var files = (kustomization["resources"] as? [String] ?? []).map { folder + $0 }
        if let kubectl = Self.tool("kubectl") {
            let rendered = try await Self.run(kubectl, ["kustomize", "deploy/kubernetes"])
            #expect(rendered.status == 0, "\(rendered.output)")
            let path = ScratchDirectory.process.file("kustomized", extension: "yaml")
            try Data(rendered.output.utf8).write(to: URL(fileURLWithPath: path))
            files.append(path)
            #expect(rendered.output.contains("kind: NetworkPolicy") && rendered.output.contains("kind: PrometheusRule"))
            #expect(rendered.output.contains("name: focusgate-") && rendered.output.contains("kind: ConfigMap"))
        }
        let result = try await Self.run(validator, ["--strict", "--kubernetes-version", "1.32.0"] + files)
        #expect(result.status == 0, "\(result.output)")
        // Every built-in kind checked against its schema; only the Prometheus Operator's two kinds
        // (whose schemas come with the operator) are left to kubernetes() above.
        let lines = result.output.split(separator: "\n")
        #expect(lines.filter { $0.contains("passed for resource") }.count >= 5, "\(result.output)")
        #expect(
            lines.filter { $0.hasPrefix("WARN") }.allSatisfy {
                $0.contains("PodMonitor") || $0.contains("PrometheusRule")
            }, "\(result.output)")
        #expect(!result.output.contains("ERROR"), "\(result.output)")
    }

    @Test(
        "the image: syntax line first, Package.resolved held to, librdkafka as make test-compat pins it, OCI labels, a non-root user, jemalloc"
    )
    func dockerfile() async throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "# syntax=docker/dockerfile:1", "only the first line can name the syntax")
        #expect(text.components(separatedBy: "\nFROM ").count >= 4, "librdkafka, build and run stages")
        #expect(text.contains("COPY Package.swift Package.resolved ./"))
        #expect(
            text.contains("swift package resolve --force-resolved-versions")
                && text.contains("--product focusgate --static-swift-stdlib --force-resolved-versions"))
        // One version: the release's.
        #expect(text.contains("ARG FOCUSGATE_VERSION=\(FocusGateRelease.version)\n"))
        for label in ["version", "licenses", "source", "revision", "title"] {
            #expect(text.contains("org.opencontainers.image.\(label)="), "label \(label)")
        }
        #expect(text.contains(#"org.opencontainers.image.licenses="Apache-2.0""#))
        // The librdkafka that make test-compat proves: scripts/compat-deps.sh's pins, exactly.
        let compat = try String(
            contentsOf: Self.root.appendingPathComponent("scripts/compat-deps.sh"), encoding: .utf8)
        func value(_ name: String, in text: String, prefix: String) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix(prefix + name + "=") }.map {
                String($0.dropFirst(prefix.count + name.count + 1))
            }
        }
        for (compatName, imageName) in [
            ("version", "LIBRDKAFKA_VERSION"), ("debian_revision", "LIBRDKAFKA_DEBIAN_REVISION"),
            ("orig_sha256", "LIBRDKAFKA_ORIG_SHA256"), ("patches_sha256", "LIBRDKAFKA_PATCHES_SHA256"),
        ] {
            let pinned = try #require(value(compatName, in: compat, prefix: ""))
            #expect(
                value(imageName, in: text, prefix: "ARG ") == pinned, "\(imageName) is compat-deps.sh's \(compatName)")
        }
        #expect(text.contains("ENV PKG_CONFIG_PATH=/opt/librdkafka/lib/pkgconfig"), "built against it")
        // Run on Debian 13, whose librdkafka1 is that version (checked when the image is built).
        let runStage = try #require(text.components(separatedBy: "\nFROM ").last)
        #expect(runStage.hasPrefix("debian:trixie-slim") && runStage.contains("librdkafka1"))
        #expect(runStage.contains(#""${LIBRDKAFKA_VERSION}"-*) ;;"#))
        #expect(runStage.contains("USER 10001"))
        // The binary links jemalloc: built against libjemalloc-dev, run with libjemalloc2.
        #expect(text.contains("libjemalloc-dev") && runStage.contains("libjemalloc2"))
        #expect(text.contains(#""--config", "/etc/focusgate/focusgate.yaml""#))
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
