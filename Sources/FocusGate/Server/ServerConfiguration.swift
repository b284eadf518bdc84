public import FocusGateCore
#if canImport(Glibc)
    import Glibc
#endif

/// The settings `focusgate serve` uses, with the keys and defaults of docs/contract.md, Configuration.
///
/// Read from a YAML file and the environment (see `ServerConfiguration+Reader.swift`); every key is
/// documented with its default in `config/focusgate.yaml`.
public struct ServerConfiguration: Sendable {
    /// `kafka.bootstrapServers`; empty starts the embedded broker. Default: empty.
    public var bootstrapServers = ""
    /// `kafka.embedded.port`. Default: `9092`.
    public var embeddedPort: UInt16 = 9092
    /// `kafka.embedded.partitions`. Default: `8`.
    public var embeddedPartitions = 8
    /// `kafka.groupId`. Default: `focusgate`.
    public var groupID = "focusgate"
    /// `kafka.staticMembership`: each worker joins the group as a static member named after
    /// `instance.name` (``GatewayConfiguration/staticMembership``): a restart within the session
    /// timeout takes back its partitions at once; a stop for good leaves them waiting out the
    /// session. Default: on, except with the embedded broker (its coordinator does not know static
    /// members).
    public var staticMembership: Bool?
    /// `kafka.properties`: librdkafka properties passed through to every client. Default: none.
    public var kafkaProperties: [String: String] = [:]
    /// `topics.*`. Default: the names of docs/contract.md, Topics.
    public var topics = TopicNames()
    /// `delivery.mode`. Default: `exactly-once`.
    public var deliveryMode: GatewayConfiguration.DeliveryMode = .exactlyOnce
    /// `delivery.commitGroupOffsets`: also commit offsets through the group after each transaction
    /// (needed with the embedded broker, whose transactions do not store offsets). Default: on with
    /// the embedded broker (`serve`'s own, or `focusgate broker`, known by its cluster id), off
    /// otherwise.
    public var commitGroupOffsets: Bool?
    /// `commit.intervalMs`. Default: `250`.
    public var commitIntervalMilliseconds = 250
    /// `commit.replayBackoffMs`. Default: `100`.
    public var replayBackoffMilliseconds = 100
    /// `commit.replayBackoffMaxMs`. Default: `10000`.
    public var replayBackoffMaxMilliseconds = 10_000
    /// `commit.maxAttemptsPerInput`. Default: `3`.
    public var maxAttemptsPerInput = 3
    /// `workers`. Default: `1`.
    public var workers = 1
    /// `readiness.kafkaTimeoutSeconds`. Default: `30`.
    public var readinessKafkaTimeoutSeconds = 30
    /// `readiness.loopTimeoutSeconds`. Default: `60`.
    public var readinessLoopTimeoutSeconds = 60
    /// `store.kind`: `sqlite` or `postgres`. Default: `sqlite`.
    public var storeKind = "sqlite"
    /// `store.sqlite.path`. Default: `focusgate.sqlite`.
    public var sqlitePath = "focusgate.sqlite"
    /// `store.postgres.url`. Default: empty.
    public var postgresURL = ""
    /// `cache.maxEntries`. Default: `1000000`.
    public var cacheMaxEntries = 1_000_000
    /// `cache.loadTimeoutMs`: how long a batch waits for its misses' contexts from the store.
    /// Default: `2000`.
    public var cacheLoadTimeoutMilliseconds = 2_000
    /// `admin.host`. Default: `127.0.0.1`.
    public var adminHost = "127.0.0.1"
    /// `admin.port`. Default: `8080`.
    public var adminPort = 8080
    /// `admin.token`; when set, `/v1/*` needs `Authorization: Bearer <token>`. Default: empty.
    public var adminToken = ""
    /// `admin.allowUnauthenticated`: lets the admin API listen beyond loopback without a token.
    /// Default: `false`.
    public var adminAllowUnauthenticated = false
    /// The admin listener's bounds (`admin.idleTimeoutSeconds`, `admin.requestTimeoutSeconds`,
    /// `admin.maxConnections`).
    var adminChannelLimits: AdminChannel.Limits {
        var limits = AdminChannel.Limits()
        limits.idleTimeout = .seconds(Int64(self.adminIdleTimeoutSeconds))
        limits.requestTimeout = .seconds(Int64(self.adminRequestTimeoutSeconds))
        limits.maxConnections = self.adminMaxConnections
        return limits
    }

    /// The producers' `message.max.bytes`: `kafka.properties`'s, else librdkafka's default.
    var producerMessageMaxBytes: Int { self.kafkaProperties["message.max.bytes"].flatMap(Int.init) ?? 1_000_000 }

    /// `admin.idleTimeoutSeconds`: how long the admin listener keeps a connection that sends
    /// nothing, so that idle or abandoned clients cannot hold its sockets. Default: `60`.
    public var adminIdleTimeoutSeconds = 60
    /// `admin.requestTimeoutSeconds`: from a request's first byte to its last. Default: `10`.
    public var adminRequestTimeoutSeconds = 10
    /// `admin.maxConnections`: connections the admin listener holds at once. Default: `256`.
    public var adminMaxConnections = 256
    /// `admin.peers`: every instance of the group as `host:port` (a name may resolve to several,
    /// as a Kubernetes headless Service does), asked for the badges of users this instance does
    /// not hold. Default: none (one instance, or each answers only for what it holds).
    public var adminPeers: [String] = []

    /// Whether `admin.host` is a loopback address (only this machine reaches it).
    public var adminHostIsLoopback: Bool {
        let host = self.adminHost.lowercased()
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
    /// `limits.maxEventBytes`. Default: `65536`.
    public var maxEventBytes = 65_536
    /// `badges.maxUnreadPerApp`. Default: `1000`.
    public var maxUnreadPerApp = 1000
    /// `dedupe.windowPerUser`: notification ids remembered per user. Default: `1000`.
    public var dedupeWindowPerUser = 1000
    /// `summaries.maxItemsPerApp`: notifications a summary names per app. Default: `5`.
    public var summaryItemsPerApp = 5
    /// `people.repeatedWindowSeconds`: how close a sender's two notifications are for the
    /// second to get through as a repeated sender. Default: `180`.
    public var repeatedWindowSeconds = Int(FocusDecider.defaultRepeatedSenderWindowSeconds)
    /// `timers.maxFiredPerBatch`: most Focus transitions (expiry, schedule boundaries) a worker
    /// acts on per loop turn, between record batches. Default: `1000`.
    public var maxTimersPerBatch = 1000
    /// `state.retentionMs`: a remembered or unread notification decided longer ago is forgotten,
    /// and a user left with nothing with it; `0`: kept forever. Default: 30 days.
    public var stateRetentionMilliseconds = 2_592_000_000
    /// The longest `state.retentionMs` taken: 100 years.
    static let maxRetentionMilliseconds = 3_153_600_000_000
    /// `rateLimits.perUser.max`: delivered notifications per user in the window, for users whose
    /// context sets no `rateLimits`; `0`: no cap. Default: `0`.
    public var rateLimitPerUser = 0
    /// `rateLimits.perUser.windowSeconds`. Default: `3600`.
    public var rateLimitPerUserWindowSeconds = 3600
    /// `rateLimits.perApp.max`: delivered notifications per (user, app) in the window; `0`: no
    /// cap. Default: `0`.
    public var rateLimitPerApp = 0
    /// `rateLimits.perApp.windowSeconds`. Default: `3600`.
    public var rateLimitPerAppWindowSeconds = 3600
    /// `rateLimits.exempt`: what a cap never silences, comma-separated (`critical`,
    /// `time-sensitive`, `allowed-senders`). Default: all three.
    public var rateLimitExempt = FocusContext.RateLimits.Exemption.allCases
    /// The default rate limits the `rateLimits.*` keys describe.
    public var defaultRateLimits: FocusContext.RateLimits {
        FocusContext.RateLimits(
            perUser: self.rateLimitPerUser == 0
                ? nil : .init(max: self.rateLimitPerUser, windowSeconds: self.rateLimitPerUserWindowSeconds),
            perApp: self.rateLimitPerApp == 0
                ? nil : .init(max: self.rateLimitPerApp, windowSeconds: self.rateLimitPerAppWindowSeconds),
            exempt: self.rateLimitExempt)
    }
    /// `instance.name`: this instance's name in the group, unique among its instances and the
    /// same across its restarts; part of each worker's transactional id, so that a restarted
    /// instance fences its predecessor's open transaction at once. Default: empty, the host name
    /// and the admin port (`focusgate-0-8080`: a Kubernetes StatefulSet's pod names are stable).
    public var instanceName = ""

    /// ``instanceName``, or the host name and admin port when it is empty.
    public var resolvedInstanceName: String {
        guard self.instanceName.isEmpty else { return self.instanceName }
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        return "\(host.isEmpty ? "localhost" : host)-\(self.adminPort)"
    }

    /// `log.level`: trace, debug, info, notice, warning, error, critical. Default: `info`.
    public var logLevel = "info"
    /// `log.format`: `text` (one human line) or `json` (one JSON object per line). Default: `text`.
    public var logFormat = "text"

    /// The defaults.
    public init() {}

    /// A configuration error naming the key.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        public var key: String
        public var message: String
        public var description: String { "\(self.key): \(self.message)" }

        public init(key: String, message: String) {
            self.key = key
            self.message = message
        }

        /// `store.kind: postgres` in a binary built without the `PostgreSQL` trait (`make run`'s).
        static let noPostgreSQL = Error(
            key: "store.kind",
            message:
                "postgres: this binary was built without the PostgreSQL store (make run's quick build); build it with the default traits (make release, or swift build)"
        )
    }

    /// The context cache's settings.
    public var cache: ContextCache.Configuration {
        var cache = ContextCache.Configuration()
        cache.maxEntries = self.cacheMaxEntries
        cache.loadTimeout = .milliseconds(self.cacheLoadTimeoutMilliseconds)
        return cache
    }

    /// The pipeline's settings, for the resolved bootstrap servers.
    ///
    /// - Parameter embedded: Whether `serve` started the embedded broker itself. When it did not,
    ///   the pipeline asks the cluster whether it is one (`focusgate broker`) before it starts.
    public func gateway(bootstrapServers: String, embedded: Bool) -> GatewayConfiguration {
        var gateway = GatewayConfiguration(bootstrapServers: bootstrapServers)
        gateway.groupID = self.groupID
        gateway.transactionalIDPrefix = "\(self.groupID)-\(self.resolvedInstanceName)"
        gateway.kafkaProperties = self.kafkaProperties
        gateway.topics = self.topics
        gateway.deliveryMode = self.deliveryMode
        gateway.commitInterval = .milliseconds(self.commitIntervalMilliseconds)
        gateway.replayBackoff = .milliseconds(self.replayBackoffMilliseconds)
        gateway.maxReplayBackoff = .milliseconds(self.replayBackoffMaxMilliseconds)
        gateway.maxAttemptsPerInput = self.maxAttemptsPerInput
        gateway.workers = self.workers
        gateway.readinessKafkaTimeout = .seconds(self.readinessKafkaTimeoutSeconds)
        gateway.readinessLoopTimeout = .seconds(self.readinessLoopTimeoutSeconds)
        gateway.maxEventBytes = self.maxEventBytes
        gateway.maxCopyBytes = self.producerMessageMaxBytes - Self.ownHeaderBytes
        gateway.maxUnreadPerApp = self.maxUnreadPerApp
        gateway.dedupeWindowPerUser = self.dedupeWindowPerUser
        gateway.summaryItemsPerApp = self.summaryItemsPerApp
        gateway.repeatedSenderWindow = .seconds(self.repeatedWindowSeconds)
        gateway.maxTimersPerBatch = self.maxTimersPerBatch
        gateway.stateRetentionMilliseconds = Int64(self.stateRetentionMilliseconds)
        gateway.rateLimits = RateLimitPolicy(self.defaultRateLimits)
        gateway.commitGroupOffsets = self.commitGroupOffsets ?? false
        gateway.staticMembership = self.staticMembership ?? true
        let commitGroupOffsets = self.commitGroupOffsets
        let staticMembership = self.staticMembership
        let embeddedSettings: @Sendable (inout GatewayConfiguration) -> Void = {
            Self.applyEmbeddedBrokerSettings(
                to: &$0, commitGroupOffsets: commitGroupOffsets, staticMembership: staticMembership)
        }
        if embedded {
            embeddedSettings(&gateway)
        } else {
            gateway.embeddedBrokerSettings = embeddedSettings
        }
        return gateway
    }

    /// What the embedded broker (librdkafka's mock cluster) needs, unless set explicitly.
    private static func applyEmbeddedBrokerSettings(
        to gateway: inout GatewayConfiguration, commitGroupOffsets: Bool?, staticMembership: Bool?
    ) {
        // Its transactions do not store the offsets sent with them.
        gateway.commitGroupOffsets = commitGroupOffsets ?? true
        // Its coordinator treats a static member as a new one at each join, while the client,
        // being static, does not leave at a stop: every restart would wait out the session.
        gateway.staticMembership = staticMembership ?? false
        // Its group coordinator does not empty a group when the last member leaves: it waits
        // session.timeout.ms - 1 s before the next member's join completes, so that a restart
        // against a long-lived `focusgate broker` got its partitions 44 s later with the 45 s
        // default. A real cluster empties the group at the leave. (Heartbeats then go every
        // second, well inside the session.)
        gateway.sessionTimeout = Self.embeddedSessionTimeout
        if gateway.kafkaProperties["heartbeat.interval.ms"] == nil {
            gateway.kafkaProperties["heartbeat.interval.ms"] = "1000"
        }
        // It also holds a fetch for the whole wait when no data is there at the request (a real
        // broker answers as soon as data arrives): keep the wait short.
        if gateway.kafkaProperties["fetch.wait.max.ms"] == nil {
            gateway.kafkaProperties["fetch.wait.max.ms"] = "10"
        }
    }

    /// The group session timeout against the embedded broker (a restart there gets its
    /// partitions this long minus 1 s after the previous instance left).
    public static let embeddedSessionTimeout: Duration = .seconds(3)
}
