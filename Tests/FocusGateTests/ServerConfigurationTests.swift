import FocusGate
import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

@Suite("Configuration: YAML file, environment overrides, validation")
struct ServerConfigurationTests {
    static let documented: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("config/focusgate.yaml"), encoding: .utf8)) ?? ""
    }()

    @Test("config/focusgate.yaml names every key and its values are the defaults")
    func documentedFileIsTheDefaults() throws {
        #expect(!Self.documented.isEmpty)
        let loaded = try ServerConfiguration.load(yaml: Self.documented, environment: [:])
        #expect(
            loaded.describe().map { "\($0.key)=\($0.value)" }
                == ServerConfiguration().describe().map { "\($0.key)=\($0.value)" })
        for key in ServerConfiguration.keys {
            #expect(Self.documented.contains(String(key.split(separator: ".").last!) + ":"), "\(key) is documented")
        }
    }

    @Test("docs/contract.md's Configuration table has every key the reader knows, and no other")
    func contractTableMatchesTheReader() throws {
        let section = try ProjectDocuments.section("Configuration")
        // A row's first cell: one key, or several as `a` / `b` (each in backticks).
        var documented: Set<String> = []
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.split(separator: "|").first ?? ""
            for key in cell.split(separator: "`").enumerated().filter({ $0.offset % 2 == 1 }).map(\.element) {
                documented.insert(String(key))
            }
        }
        // `kafka.properties` is one key: a map of librdkafka properties.
        let known = Set(ServerConfiguration.keys).union(["kafka.properties"])
        #expect(known.count >= 40)
        #expect(
            documented == known,
            "documented only: \(documented.subtracting(known).sorted()); read only: \(known.subtracting(documented).sorted())"
        )
    }

    @Test("the environment overrides the file; kafka.properties merge")
    func environmentOverrides() throws {
        let yaml = """
            kafka:
              bootstrapServers: kafka-1:9092
              properties:
                security.protocol: SASL_SSL
                sasl.password: from-file
            delivery:
              mode: at-least-once
            workers: 2
            """
        let configuration = try ServerConfiguration.load(
            yaml: yaml,
            environment: [
                "FOCUSGATE_WORKERS": "4",
                "FOCUSGATE_KAFKA_PROPERTIES_SASL_PASSWORD": "from-env",
                "FOCUSGATE_ADMIN_TOKEN": "s3cret",
                "FOCUSGATE_STORE_KIND": "postgres",
                "FOCUSGATE_STORE_POSTGRES_URL": "postgres://app:hunter2@db:5432/focus",
                "FOCUSGATE_CACHE_LOADTIMEOUTMS": "60000",
            ])
        #expect(configuration.bootstrapServers == "kafka-1:9092")
        #expect(configuration.workers == 4)
        #expect(
            configuration.cache.loadTimeout == .seconds(60) && ServerConfiguration().cache.loadTimeout == .seconds(2))
        #expect(configuration.deliveryMode == .atLeastOnce)
        #expect(configuration.kafkaProperties == ["security.protocol": "SASL_SSL", "sasl.password": "from-env"])
        let printed = configuration.describe().map { "\($0.key): \($0.value)" }.joined(separator: "\n")
        #expect(
            !printed.contains("from-env") && !printed.contains("s3cret") && !printed.contains("hunter2"),
            "secrets are redacted")
        #expect(printed.contains("store.postgres.url: postgres://app:<redacted>@db:5432/focus"))
        #expect(printed.contains("kafka.properties.security.protocol: SASL_SSL"))
        let gateway = configuration.gateway(bootstrapServers: "kafka-1:9092", embedded: false)
        #expect(gateway.workers == 4 && !gateway.commitGroupOffsets)
        #expect(ServerConfiguration().gateway(bootstrapServers: "127.0.0.1:1", embedded: true).commitGroupOffsets)
    }

    @Test(
        "the embedded broker's settings: applied when serve started it, left to the cluster-id check otherwise; explicit settings win"
    )
    func embeddedBrokerSettings() throws {
        let started = ServerConfiguration().gateway(bootstrapServers: "127.0.0.1:1", embedded: true)
        #expect(started.commitGroupOffsets && started.sessionTimeout == ServerConfiguration.embeddedSessionTimeout)
        #expect(started.kafkaProperties["heartbeat.interval.ms"] == "1000")
        #expect(started.embeddedBrokerSettings == nil, "nothing left to find out")

        var explicit = ServerConfiguration()
        explicit.commitGroupOffsets = false
        explicit.kafkaProperties = ["fetch.wait.max.ms": "100", "heartbeat.interval.ms": "300"]
        var elsewhere = explicit.gateway(bootstrapServers: "127.0.0.1:1", embedded: false)
        #expect(elsewhere.sessionTimeout == .seconds(45) && !elsewhere.commitGroupOffsets, "a real cluster's defaults")
        let settings = try #require(elsewhere.embeddedBrokerSettings, "checked against the cluster id")
        settings(&elsewhere)
        #expect(elsewhere.sessionTimeout == ServerConfiguration.embeddedSessionTimeout)
        #expect(!elsewhere.commitGroupOffsets, "delivery.commitGroupOffsets set explicitly wins")
        #expect(elsewhere.kafkaProperties == ["fetch.wait.max.ms": "100", "heartbeat.interval.ms": "300"])
        #expect(GatewayConfiguration.isEmbeddedBroker(clusterID: "mockCluster1a2b3c"))
        #expect(!GatewayConfiguration.isEmbeddedBroker(clusterID: "lkc-8x2zq7"))
    }

    @Test(
        "errors name the key",
        arguments: [
            ("workers: 0", "workers"),
            ("delivery:\n  mode: twice", "delivery.mode"),
            ("commit:\n  intervalMs: soon", "commit.intervalMs"),
            ("commit:\n  replayBackoffMs: 2000\n  replayBackoffMaxMs: 1000", "commit.replayBackoffMaxMs"),
            ("commit:\n  replayBackoffMaxMs: 600000", "commit.replayBackoffMaxMs"),
            ("store:\n  kind: mysql", "store.kind"),
            ("store:\n  kind: postgres", "store.postgres.url"),
            ("kafka:\n  bootstrapserver: x", "kafka.bootstrapserver"),
            ("delivery:\n  commitGroupOffsets: maybe", "delivery.commitGroupOffsets"),
            ("topics:\n  notifications: [a, b]", "topics.notifications"),
            ("- a list", "(file)"),
            ("kafka: {", "(file)"),
        ])
    func errorsNameTheKey(yaml: String, key: String) {
        #expect {
            _ = try ServerConfiguration.load(yaml: yaml, environment: [:])
        } throws: { error in
            (error as? ServerConfiguration.Error)?.key == key
        }
    }

    @Test("commit.replayBackoffMs and commit.replayBackoffMaxMs reach the pipeline")
    func replayBackoff() throws {
        let configuration = try ServerConfiguration.load(
            yaml: "commit:\n  replayBackoffMs: 250", environment: ["FOCUSGATE_COMMIT_REPLAYBACKOFFMAXMS": "4000"])
        let gateway = configuration.gateway(bootstrapServers: "127.0.0.1:1", embedded: false)
        #expect(gateway.replayBackoff == .milliseconds(250) && gateway.maxReplayBackoff == .seconds(4))
        let defaults = ServerConfiguration().gateway(bootstrapServers: "127.0.0.1:1", embedded: false)
        #expect(defaults.replayBackoff == .milliseconds(100) && defaults.maxReplayBackoff == .seconds(10))
    }

    @Test("an environment value of the wrong type names the key")
    func environmentErrors() {
        #expect {
            _ = try ServerConfiguration.load(yaml: nil, environment: ["FOCUSGATE_ADMIN_PORT": "eighty"])
        } throws: { ($0 as? ServerConfiguration.Error)?.key == "admin.port" }
    }
}

extension ServerConfigurationTests {
    @Test("rateLimits.*: the default caps from the file and the environment; unknown exemptions refused by name")
    func rateLimits() throws {
        let configuration = try ServerConfiguration.load(
            yaml: "rateLimits:\n  perUser:\n    max: 20\n  exempt: critical\n",
            environment: ["FOCUSGATE_RATELIMITS_PERAPP_MAX": "5", "FOCUSGATE_RATELIMITS_PERAPP_WINDOWSECONDS": "600"])
        #expect(
            configuration.defaultRateLimits
                == .init(
                    perUser: .init(max: 20, windowSeconds: 3600), perApp: .init(max: 5, windowSeconds: 600),
                    exempt: [.critical]))
        #expect(ServerConfiguration().defaultRateLimits.perUser == nil, "no cap unless configured")
        #expect {
            try ServerConfiguration.load(yaml: "rateLimits:\n  exempt: critical,vip\n", environment: [:])
        } throws: { ($0 as? ServerConfiguration.Error)?.key == "rateLimits.exempt" }
        #expect {
            try ServerConfiguration.load(yaml: nil, environment: ["FOCUSGATE_RATELIMITS_PERUSER_MAX": "10001"])
        } throws: { ($0 as? ServerConfiguration.Error)?.key == "rateLimits.perUser.max" }
    }

    @Test(
        "the admin API listens beyond loopback only with a token or admin.allowUnauthenticated; loopback needs neither"
    )
    func adminListener() throws {
        #expect(throws: Never.self) { try ServerConfiguration.load(yaml: nil, environment: [:]) }
        for host in ["127.0.0.1", "localhost", "::1"] {
            #expect(throws: Never.self) {
                try ServerConfiguration.load(yaml: nil, environment: ["FOCUSGATE_ADMIN_HOST": host])
            }
        }
        #expect {
            try ServerConfiguration.load(yaml: "admin:\n  host: 0.0.0.0\n", environment: [:])
        } throws: { error in
            (error as? ServerConfiguration.Error)?.key == "admin.host"
                && "\(error)".contains("admin.token") && "\(error)".contains("admin.allowUnauthenticated")
        }
        let secret = "3f9c0e7a51d24b8e9a6f0c2d7b1e4a95"
        let withToken = try ServerConfiguration.load(
            yaml: nil, environment: ["FOCUSGATE_ADMIN_HOST": "0.0.0.0", "FOCUSGATE_ADMIN_TOKEN": secret])
        #expect(withToken.adminHost == "0.0.0.0")
        // On loopback only this machine reaches the API: any token will do there.
        #expect(throws: Never.self) {
            try ServerConfiguration.load(yaml: nil, environment: ["FOCUSGATE_ADMIN_TOKEN": "t"])
        }
        let open = try ServerConfiguration.load(
            yaml: "admin:\n  host: 10.0.0.5\n  allowUnauthenticated: true\n", environment: [:])
        #expect(open.adminAllowUnauthenticated)
    }

    @Test(
        "beyond loopback, a placeholder or short admin token stops the start naming admin.token",
        arguments: [
            "change-me", "CHANGE-ME-please-0123456789abcdef0123", "replace-me-with-a-real-secret-of-32b", "t",
            "0123456789abcdef0123456789abcde", String(repeating: "ab", count: 20),
        ])
    func weakAdminToken(token: String) throws {
        #expect {
            try ServerConfiguration.load(
                yaml: "admin:\n  host: 0.0.0.0\n", environment: ["FOCUSGATE_ADMIN_TOKEN": token])
        } throws: { error in
            (error as? ServerConfiguration.Error)?.key == "admin.token"
        }
    }

    @Test("limits.maxEventBytes with FocusGate's own headers must fit the producer's message.max.bytes")
    func eventLimitFitsProducer() throws {
        #expect {
            try ServerConfiguration.load(yaml: "limits:\n  maxEventBytes: 1000000\n", environment: [:])
        } throws: { ($0 as? ServerConfiguration.Error)?.key == "limits.maxEventBytes" }
        let raised = try ServerConfiguration.load(
            yaml: "limits:\n  maxEventBytes: 1000000\nkafka:\n  properties:\n    message.max.bytes: \"2000000\"\n",
            environment: [:])
        #expect(raised.maxEventBytes == 1_000_000)
        #expect(throws: Never.self) {
            try ServerConfiguration.load(yaml: "limits:\n  maxEventBytes: 995904\n", environment: [:])
        }
    }
}
