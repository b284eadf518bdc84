import Yams

// MARK: - Reading: YAML file, then environment overrides

extension ServerConfiguration {
    /// Every scalar key, in the order `focusgate config` prints them.
    public static let keys = [
        "kafka.bootstrapServers", "kafka.embedded.port", "kafka.embedded.partitions", "kafka.groupId",
        "topics.notifications", "topics.invalidations", "topics.delivered", "topics.silenced", "topics.badges",
        "topics.dlq", "topics.state",
        "delivery.mode", "delivery.commitGroupOffsets", "commit.intervalMs", "workers",
        "store.kind", "store.sqlite.path", "store.postgres.url", "cache.maxEntries",
        "admin.host", "admin.port", "admin.token",
        "limits.maxEventBytes", "badges.maxUnreadPerApp", "dedupe.windowPerUser", "log.level", "log.format",
    ]

    /// The environment variable overriding `key`: `FOCUSGATE_` and the key upper-cased, dots as underscores.
    public static func environmentName(_ key: String) -> String {
        "FOCUSGATE_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// The defaults overridden by `FOCUSGATE_*` variables.
    public static func fromEnvironment(_ environment: [String: String]) throws(Error) -> ServerConfiguration {
        try self.load(yaml: nil, environment: environment)
    }

    /// The defaults, overridden by the YAML document `yaml` (if any), overridden by `FOCUSGATE_*`
    /// variables of `environment`.
    ///
    /// - Throws: ``Error`` naming the key: unknown keys, values of the wrong type or range.
    public static func load(yaml: String?, environment: [String: String]) throws(Error) -> ServerConfiguration {
        var values: [String: String] = [:]
        var properties: [String: String] = [:]
        if let yaml {
            try self.flatten(yaml: yaml, into: &values, properties: &properties)
        }
        for key in self.keys {
            if let value = environment[self.environmentName(key)] { values[key] = value }
        }
        let prefix = "FOCUSGATE_KAFKA_PROPERTIES_"
        for (name, value) in environment where name.hasPrefix(prefix) {
            properties[name.dropFirst(prefix.count).lowercased().replacingOccurrences(of: "_", with: ".")] = value
        }
        return try self.parse(values, properties: properties)
    }

    private static func parse(_ values: [String: String], properties: [String: String]) throws(Error)
        -> ServerConfiguration
    {
        var configuration = ServerConfiguration()
        func integer(_ key: String, _ range: ClosedRange<Int>) throws(Error) -> Int? {
            guard let text = values[key] else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw Error(
                    key: key, message: "must be an integer in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
            }
            return number
        }
        func string(_ key: String, _ current: String) -> String { values[key] ?? current }

        configuration.bootstrapServers = string("kafka.bootstrapServers", configuration.bootstrapServers)
        configuration.embeddedPort =
            try integer("kafka.embedded.port", 1...65535).map(UInt16.init) ?? configuration.embeddedPort
        configuration.embeddedPartitions =
            try integer("kafka.embedded.partitions", 1...1000) ?? configuration.embeddedPartitions
        configuration.groupID = string("kafka.groupId", configuration.groupID)
        guard !configuration.groupID.isEmpty else { throw Error(key: "kafka.groupId", message: "must not be empty") }
        configuration.kafkaProperties = properties
        configuration.topics.notifications = string("topics.notifications", configuration.topics.notifications)
        configuration.topics.invalidations = string("topics.invalidations", configuration.topics.invalidations)
        configuration.topics.delivered = string("topics.delivered", configuration.topics.delivered)
        configuration.topics.silenced = string("topics.silenced", configuration.topics.silenced)
        configuration.topics.badges = string("topics.badges", configuration.topics.badges)
        configuration.topics.deadLetters = string("topics.dlq", configuration.topics.deadLetters)
        configuration.topics.state = string("topics.state", configuration.topics.state)
        for (key, name) in [
            ("topics.notifications", configuration.topics.notifications),
            ("topics.invalidations", configuration.topics.invalidations),
            ("topics.delivered", configuration.topics.delivered), ("topics.silenced", configuration.topics.silenced),
            ("topics.badges", configuration.topics.badges), ("topics.dlq", configuration.topics.deadLetters),
            ("topics.state", configuration.topics.state),
        ] where name.isEmpty {
            throw Error(key: key, message: "must not be empty")
        }
        if let mode = values["delivery.mode"] {
            guard let parsed = GatewayConfiguration.DeliveryMode(mode) else {
                throw Error(key: "delivery.mode", message: "must be exactly-once or at-least-once, not '\(mode)'")
            }
            configuration.deliveryMode = parsed
        }
        if let text = values["delivery.commitGroupOffsets"] {
            guard let flag = Bool(text) else {
                throw Error(key: "delivery.commitGroupOffsets", message: "must be true or false, not '\(text)'")
            }
            configuration.commitGroupOffsets = flag
        }
        configuration.commitIntervalMilliseconds =
            try integer("commit.intervalMs", 10...60_000) ?? configuration.commitIntervalMilliseconds
        configuration.workers = try integer("workers", 1...256) ?? configuration.workers
        configuration.storeKind = string("store.kind", configuration.storeKind)
        guard ["sqlite", "postgres"].contains(configuration.storeKind) else {
            throw Error(key: "store.kind", message: "must be sqlite or postgres, not '\(configuration.storeKind)'")
        }
        configuration.sqlitePath = string("store.sqlite.path", configuration.sqlitePath)
        configuration.postgresURL = string("store.postgres.url", configuration.postgresURL)
        if configuration.storeKind == "postgres" && configuration.postgresURL.isEmpty {
            throw Error(key: "store.postgres.url", message: "is required when store.kind is postgres")
        }
        configuration.cacheMaxEntries =
            try integer("cache.maxEntries", 1...100_000_000) ?? configuration.cacheMaxEntries
        configuration.adminHost = string("admin.host", configuration.adminHost)
        configuration.adminPort = try integer("admin.port", 1...65535) ?? configuration.adminPort
        configuration.adminToken = string("admin.token", configuration.adminToken)
        configuration.maxEventBytes =
            try integer("limits.maxEventBytes", 64...16_777_216) ?? configuration.maxEventBytes
        configuration.maxUnreadPerApp =
            try integer("badges.maxUnreadPerApp", 1...100_000) ?? configuration.maxUnreadPerApp
        configuration.dedupeWindowPerUser =
            try integer("dedupe.windowPerUser", 1...100_000) ?? configuration.dedupeWindowPerUser
        configuration.logLevel = string("log.level", configuration.logLevel)
        guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(configuration.logLevel)
        else {
            throw Error(
                key: "log.level",
                message:
                    "must be trace, debug, info, notice, warning, error or critical, not '\(configuration.logLevel)'")
        }
        configuration.logFormat = string("log.format", configuration.logFormat)
        guard ["text", "json"].contains(configuration.logFormat) else {
            throw Error(key: "log.format", message: "must be text or json, not '\(configuration.logFormat)'")
        }
        return configuration
    }

    /// Flattens a YAML mapping into dotted keys; `kafka.properties` stays one map of librdkafka names.
    private static func flatten(yaml: String, into values: inout [String: String], properties: inout [String: String])
        throws(Error)
    {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw Error(key: "(file)", message: "is not valid YAML: \(error)")
        }
        guard let root else { return }
        guard case .mapping(let mapping) = root else {
            throw Error(key: "(file)", message: "must be a mapping of keys")
        }
        let known = Set(self.keys)
        func walk(_ mapping: Node.Mapping, path: String) throws(Error) {
            for (keyNode, value) in mapping {
                guard let name = keyNode.scalar?.string else {
                    throw Error(key: path.isEmpty ? "(file)" : path, message: "keys must be strings")
                }
                let key = path.isEmpty ? name : "\(path).\(name)"
                switch value {
                case .mapping(let nested) where key == "kafka.properties":
                    for (propertyNode, propertyValue) in nested {
                        guard let property = propertyNode.scalar?.string, let text = propertyValue.scalar?.string else {
                            throw Error(key: key, message: "must map librdkafka property names to scalar values")
                        }
                        properties[property] = text
                    }
                case .mapping(let nested):
                    try walk(nested, path: key)
                case .scalar(let scalar):
                    guard known.contains(key) else { throw Error(key: key, message: "is not a configuration key") }
                    // A YAML null (`~`, empty) keeps the default.
                    if scalar.string != "~" && scalar.string != "null"
                        && !(scalar.string.isEmpty && scalar.style == .plain)
                    {
                        values[key] = scalar.string
                    }
                default:
                    throw Error(key: key, message: "must be a scalar value")
                }
            }
        }
        try walk(mapping, path: "")
    }

    /// The effective configuration as `key: value` lines, secrets redacted (`focusgate config`).
    public func describe() -> [(key: String, value: String)] {
        var lines: [(String, String)] = [
            ("kafka.bootstrapServers", self.bootstrapServers), ("kafka.embedded.port", "\(self.embeddedPort)"),
            ("kafka.embedded.partitions", "\(self.embeddedPartitions)"), ("kafka.groupId", self.groupID),
        ]
        for (property, value) in self.kafkaProperties.sorted(by: { $0.key < $1.key }) {
            lines.append(("kafka.properties.\(property)", Self.isSecret(property) ? "<redacted>" : value))
        }
        lines += [
            ("topics.notifications", self.topics.notifications), ("topics.invalidations", self.topics.invalidations),
            ("topics.delivered", self.topics.delivered), ("topics.silenced", self.topics.silenced),
            ("topics.badges", self.topics.badges),
            ("topics.dlq", self.topics.deadLetters), ("topics.state", self.topics.state),
            ("delivery.mode", self.deliveryMode.rawValue),
            ("delivery.commitGroupOffsets", self.commitGroupOffsets.map { "\($0)" } ?? "(with the embedded broker)"),
            ("commit.intervalMs", "\(self.commitIntervalMilliseconds)"), ("workers", "\(self.workers)"),
            ("store.kind", self.storeKind), ("store.sqlite.path", self.sqlitePath),
            ("store.postgres.url", Self.redactingPassword(self.postgresURL)),
            ("cache.maxEntries", "\(self.cacheMaxEntries)"), ("admin.host", self.adminHost),
            ("admin.port", "\(self.adminPort)"),
            ("admin.token", self.adminToken.isEmpty ? "" : "<redacted>"),
            ("limits.maxEventBytes", "\(self.maxEventBytes)"),
            ("badges.maxUnreadPerApp", "\(self.maxUnreadPerApp)"),
            ("dedupe.windowPerUser", "\(self.dedupeWindowPerUser)"),
            ("log.level", self.logLevel), ("log.format", self.logFormat),
        ]
        return lines
    }

    private static func isSecret(_ property: String) -> Bool {
        ["password", "secret", "key", "token", "jaas", "credentials"].contains { property.lowercased().contains($0) }
    }

    private static func redactingPassword(_ url: String) -> String {
        // postgres://user:password@host/db → postgres://user:<redacted>@host/db
        guard let scheme = url.range(of: "://"), let at = url.range(of: "@", range: scheme.upperBound..<url.endIndex),
            let colon = url.range(of: ":", range: scheme.upperBound..<at.lowerBound)
        else { return url }
        return url.replacingCharacters(in: colon.upperBound..<at.lowerBound, with: "<redacted>")
    }
}
