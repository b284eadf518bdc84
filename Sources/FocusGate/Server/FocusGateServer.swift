import FocusGateCore
import FocusGateKafka
import FocusGateStore
import NIOCore
import Foundation
import Hummingbird
public import Logging
import Prometheus
import ServiceLifecycle

/// `focusgate serve`: the services of one FocusGate instance, run by one `ServiceGroup` that stops
/// them gracefully on SIGTERM/SIGINT.
///
/// Runs the context store, the context cache, the invalidation listener, the notification pipeline
/// (``Gateway``) and the admin HTTP API. On SIGTERM/SIGINT the pipeline stops first (finish the
/// batch, commit, leave the group, flush), then the HTTP server, then the listener.
///
/// With no `kafka.bootstrapServers`, the caller (`focusgate serve`) starts the embedded broker and
/// passes its address: this module has no code of that broker.
public struct FocusGateServer: Sendable {
    private let configuration: ServerConfiguration
    private let embeddedBroker: String?
    private let logger: Logger

    /// - Parameters:
    ///   - configuration: The instance's settings.
    ///   - embeddedBroker: The address of the embedded broker the caller started, when
    ///     `kafka.bootstrapServers` is empty; it runs with that broker's settings.
    ///   - logger: The instance's logger.
    public init(configuration: ServerConfiguration, embeddedBroker: String? = nil, logger: Logger) {
        self.configuration = configuration
        self.embeddedBroker = embeddedBroker
        self.logger = logger
    }

    /// Starts every service, calls `onStarted` with the broker address and admin URL, and runs
    /// until a termination signal.
    ///
    /// - Throws: When a service cannot start, or `kafka.bootstrapServers` is empty and no embedded
    ///   broker was given.
    public func run(onStarted: @Sendable (_ bootstrapServers: String, _ adminURL: String) -> Void) async throws {
        let bootstrapServers =
            self.configuration.bootstrapServers.isEmpty
            ? (self.embeddedBroker ?? "") : self.configuration.bootstrapServers
        guard !bootstrapServers.isEmpty else {
            throw ServerConfiguration.Error(key: "kafka.bootstrapServers", message: "no broker to connect to")
        }
        let embedded = self.configuration.bootstrapServers.isEmpty

        let store: any ContextStore
        if self.configuration.storeKind == "postgres" {
            #if PostgreSQL
                let postgres = try PostgresContextStore(url: self.configuration.postgresURL, logger: self.logger)
                try await postgres.migrate()
                store = postgres
            #else
                throw ServerConfiguration.Error.noPostgreSQL
            #endif
        } else {
            store = try await SQLiteContextStore.open(path: self.configuration.sqlitePath, logger: self.logger)
        }

        let registry = PrometheusCollectorRegistry()
        let cache = ContextCache(
            store: store, configuration: self.configuration.cache, metrics: ContextCacheMetrics(registry: registry),
            logger: self.logger)

        var consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: nil)
        consumerConfiguration.properties = self.configuration.kafkaProperties
        // The workers claim the instance's transactional ids only once the admin API listens: a
        // second instance started with the same name and port stops at its bind instead of
        // fencing this one.
        let (adminListening, listening) = AsyncStream<Void>.makeStream()
        let gateway = Gateway(
            configuration: self.configuration.gateway(bootstrapServers: bootstrapServers, embedded: embedded),
            cache: cache, metrics: GatewayMetrics(registry: registry), logger: self.logger,
            startsAfter: {
                for await _ in adminListening { return }
                throw CancellationError()
            }
        )
        let listener = InvalidationListener(
            configuration: consumerConfiguration, topic: self.configuration.topics.invalidations, cache: cache,
            logger: self.logger
        ) { userID, context in
            gateway.contextChanged(userID: userID, context: context)
        }

        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: bootstrapServers)
        producerConfiguration.properties = self.configuration.kafkaProperties
        let producer = try KafkaAsyncProducer(configuration: producerConfiguration, logger: self.logger)
        defer { producer.shutdown() }

        let storeProbe = StoreProbe(store: store)
        var apiConfiguration = AdminAPI.Configuration(
            token: self.configuration.adminToken.isEmpty ? nil : self.configuration.adminToken,
            rateLimits: RateLimitPolicy(self.configuration.defaultRateLimits),
            peers: self.configuration.adminPeers)
        apiConfiguration.listenerHost = self.configuration.adminHost
        if let messageMaxBytes = self.configuration.kafkaProperties["message.max.bytes"].flatMap(Int.init) {
            apiConfiguration.maxInvalidationBytes = AdminAPI.Configuration.invalidationBytes(
                messageMaxBytes: messageMaxBytes)
        }
        let api = AdminAPI(
            configuration: apiConfiguration,
            store: store,
            publisher: KafkaInvalidationPublisher(producer: producer, topic: self.configuration.topics.invalidations),
            users: gateway.directory,
            registry: registry,
            logger: self.logger,
            readiness: {
                let storeReachable = await storeProbe.isReachable()
                var checks = gateway.readinessChecks
                checks["invalidations"] = listener.isConsuming
                return Readiness(checks: checks, dependencies: ["store": storeReachable])
            }
        )
        let adminURL = "http://\(self.configuration.adminHost):\(self.configuration.adminPort)"
        let application = Application(
            router: api.router(),
            server: AdminChannel.builder(self.configuration.adminChannelLimits),
            configuration: .init(
                address: .hostname(self.configuration.adminHost, port: self.configuration.adminPort),
                serverName: "focusgate"),
            onServerRunning: { _ in
                listening.yield()
                listening.finish()
            },
            logger: self.logger
        )
        let group = ServiceGroup(
            configuration: .init(
                // Graceful shutdown runs in reverse order: the pipeline first, the listener last.
                services: [.init(service: listener), .init(service: application), .init(service: gateway)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: self.logger
            )
        )
        onStarted(bootstrapServers, adminURL)
        try await group.run()
        // A context load that timed out may still be running: the store is closed after it.
        if !(await cache.finishLoads(within: .seconds(5))) {
            self.logger.warning("context store loads still running at shutdown; closing the store under them")
        }
        await store.close()
    }
}
