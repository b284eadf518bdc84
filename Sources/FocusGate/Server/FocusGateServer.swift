import FocusGateCore
import FocusGateKafka
import FocusGateStore
import Foundation
import Hummingbird
public import Logging
import Prometheus
import ServiceLifecycle

/// `focusgate serve`: the services of one FocusGate instance, run by one `ServiceGroup` that stops
/// them gracefully on SIGTERM/SIGINT.
///
/// Runs the embedded broker (when no `kafka.bootstrapServers` is set), the context store, the
/// context cache, the invalidation listener, the notification pipeline (``Gateway``) and the admin
/// HTTP API. On SIGTERM/SIGINT the pipeline stops first (finish the batch, commit, leave the
/// group, flush), then the HTTP server, then the listener.
public struct FocusGateServer: Sendable {
    private let configuration: ServerConfiguration
    private let logger: Logger

    public init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Starts every service, calls `onStarted` with the broker address and admin URL, and runs
    /// until a termination signal.
    public func run(onStarted: @Sendable (_ bootstrapServers: String, _ adminURL: String) -> Void) async throws {
        var broker: EmbeddedKafkaBroker?
        var bootstrapServers = self.configuration.bootstrapServers
        if bootstrapServers.isEmpty {
            let embedded = try EmbeddedKafkaBroker(
                port: self.configuration.embeddedPort,
                topics: self.configuration.topics.specifications(partitions: self.configuration.embeddedPartitions),
                logger: self.logger
            )
            broker = embedded
            bootstrapServers = embedded.bootstrapServers
        }
        defer { broker?.shutdown() }

        let store: any ContextStore
        if self.configuration.storeKind == "postgres" {
            let postgres = try PostgresContextStore(url: self.configuration.postgresURL, logger: self.logger)
            try await postgres.migrate()
            store = postgres
        } else {
            store = try await SQLiteContextStore.open(path: self.configuration.sqlitePath, logger: self.logger)
        }

        let registry = PrometheusCollectorRegistry()
        var cacheConfiguration = ContextCache.Configuration()
        cacheConfiguration.maxEntries = self.configuration.cacheMaxEntries
        let cache = ContextCache(
            store: store, configuration: cacheConfiguration, metrics: ContextCacheMetrics(registry: registry),
            logger: self.logger)

        var consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: nil)
        consumerConfiguration.properties = self.configuration.kafkaProperties
        let gateway = Gateway(
            configuration: self.configuration.gateway(bootstrapServers: bootstrapServers, embedded: broker != nil),
            cache: cache, metrics: GatewayMetrics(registry: registry), logger: self.logger
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

        let api = AdminAPI(
            configuration: .init(
                token: self.configuration.adminToken.isEmpty ? nil : self.configuration.adminToken,
                rateLimits: RateLimitPolicy(self.configuration.defaultRateLimits)),
            store: store,
            publisher: KafkaInvalidationPublisher(producer: producer, topic: self.configuration.topics.invalidations),
            badges: gateway.badges,
            registry: registry,
            logger: self.logger,
            readiness: {
                let storeReachable = (try? await store.ping()) != nil
                return Readiness(checks: [
                    "pipeline": gateway.isConsuming, "invalidations": listener.isConsuming, "store": storeReachable,
                ])
            }
        )
        let adminURL = "http://\(self.configuration.adminHost):\(self.configuration.adminPort)"
        let application = Application(
            router: api.router(),
            configuration: .init(
                address: .hostname(self.configuration.adminHost, port: self.configuration.adminPort),
                serverName: "focusgate"),
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
