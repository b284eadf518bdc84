/// The settings `focusgate serve` uses, with SPEC §10's keys and defaults.
///
/// Read from the environment: each key upper-cased with dots as underscores and a `FOCUSGATE_`
/// prefix (`FOCUSGATE_KAFKA_BOOTSTRAPSERVERS` for `kafka.bootstrapServers`).
public struct ServerConfiguration: Sendable {
    /// `kafka.bootstrapServers`; empty starts the embedded broker. Default: empty.
    public var bootstrapServers = ""
    /// `kafka.embedded.port`. Default: `9092`.
    public var embeddedPort: UInt16 = 9092
    /// `kafka.embedded.partitions`. Default: `8`.
    public var embeddedPartitions = 8
    /// `kafka.properties.*`: librdkafka properties passed through (`FOCUSGATE_KAFKA_PROPERTIES_SECURITY_PROTOCOL`
    /// for `security.protocol`). Default: none.
    public var kafkaProperties: [String: String] = [:]
    /// `topics.*`. Default: SPEC §1 names.
    public var topics = TopicNames()
    /// `store.kind`: `sqlite` or `postgres`. Default: `sqlite`.
    public var storeKind = "sqlite"
    /// `store.sqlite.path`. Default: `focusgate.sqlite`.
    public var sqlitePath = "focusgate.sqlite"
    /// `store.postgres.url`. Default: empty.
    public var postgresURL = ""
    /// `cache.maxEntries`. Default: `1000000`.
    public var cacheMaxEntries = 1_000_000
    /// `admin.host`. Default: `127.0.0.1`.
    public var adminHost = "127.0.0.1"
    /// `admin.port`. Default: `8080`.
    public var adminPort = 8080
    /// `admin.token`; when set, `/v1/*` needs `Authorization: Bearer <token>`. Default: empty.
    public var adminToken = ""

    /// The defaults.
    public init() {}

    /// A configuration error naming the key.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        public var key: String
        public var message: String
        public var description: String { "\(self.key): \(self.message)" }
    }

    /// The defaults overridden by `FOCUSGATE_*` variables of `environment`.
    public static func fromEnvironment(_ environment: [String: String]) throws(Error) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        func value(_ key: String) -> String? {
            environment["FOCUSGATE_" + key.uppercased().replacingOccurrences(of: ".", with: "_")]
        }
        func integer(_ key: String, _ range: ClosedRange<Int>) throws(Error) -> Int? {
            guard let text = value(key) else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw Error(key: key, message: "must be an integer in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
            }
            return number
        }
        configuration.bootstrapServers = value("kafka.bootstrapServers") ?? configuration.bootstrapServers
        configuration.embeddedPort = try integer("kafka.embedded.port", 1...65535).map(UInt16.init) ?? configuration.embeddedPort
        configuration.embeddedPartitions = try integer("kafka.embedded.partitions", 1...1000) ?? configuration.embeddedPartitions
        for (name, text) in environment where name.hasPrefix("FOCUSGATE_KAFKA_PROPERTIES_") {
            let property = name.dropFirst("FOCUSGATE_KAFKA_PROPERTIES_".count).lowercased().replacingOccurrences(of: "_", with: ".")
            configuration.kafkaProperties[property] = text
        }
        configuration.topics.notifications = value("topics.notifications") ?? configuration.topics.notifications
        configuration.topics.invalidations = value("topics.invalidations") ?? configuration.topics.invalidations
        configuration.topics.delivered = value("topics.delivered") ?? configuration.topics.delivered
        configuration.topics.silenced = value("topics.silenced") ?? configuration.topics.silenced
        configuration.topics.badges = value("topics.badges") ?? configuration.topics.badges
        configuration.topics.deadLetters = value("topics.dlq") ?? configuration.topics.deadLetters
        configuration.topics.state = value("topics.state") ?? configuration.topics.state
        configuration.storeKind = value("store.kind") ?? configuration.storeKind
        guard ["sqlite", "postgres"].contains(configuration.storeKind) else {
            throw Error(key: "store.kind", message: "must be sqlite or postgres, not '\(configuration.storeKind)'")
        }
        configuration.sqlitePath = value("store.sqlite.path") ?? configuration.sqlitePath
        configuration.postgresURL = value("store.postgres.url") ?? configuration.postgresURL
        if configuration.storeKind == "postgres" && configuration.postgresURL.isEmpty {
            throw Error(key: "store.postgres.url", message: "is required when store.kind is postgres")
        }
        configuration.cacheMaxEntries = try integer("cache.maxEntries", 1...100_000_000) ?? configuration.cacheMaxEntries
        configuration.adminHost = value("admin.host") ?? configuration.adminHost
        configuration.adminPort = try integer("admin.port", 1...65535) ?? configuration.adminPort
        configuration.adminToken = value("admin.token") ?? configuration.adminToken
        return configuration
    }
}
