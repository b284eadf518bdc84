import FocusGateCore
import Foundation
import Yams

// MARK: - Reading: YAML file, then environment overrides

extension ServerConfiguration {
    /// One scalar configuration key: how its text is applied, and how it is shown.
    struct Setting {
        let key: String
        let apply: (String, inout ServerConfiguration) throws(Error) -> Void
        let show: (ServerConfiguration) -> String
    }

    /// Every scalar key, in the order `focusgate config` prints them: the one table the reader,
    /// the environment overrides and `describe()` go by.
    static var settings: [Setting] {
        [
            .text("kafka.bootstrapServers", \.bootstrapServers),
            .integer("kafka.embedded.port", \.embeddedPort, 1...65535),
            .integer("kafka.embedded.partitions", \.embeddedPartitions, 1...1000),
            .text("kafka.groupId", \.groupID, nonEmpty: true),
            .boolean(
                "kafka.staticMembership", \.staticMembership,
                show: { $0.map { "\($0)" } ?? "(except with the embedded broker)" }),
            .text("topics.notifications", \.topics.notifications, nonEmpty: true),
            .text("topics.invalidations", \.topics.invalidations, nonEmpty: true),
            .text("topics.delivered", \.topics.delivered, nonEmpty: true),
            .text("topics.silenced", \.topics.silenced, nonEmpty: true),
            .text("topics.badges", \.topics.badges, nonEmpty: true),
            .text("topics.status", \.topics.status, nonEmpty: true),
            .text("topics.summaries", \.topics.summaries, nonEmpty: true),
            .text("topics.dlq", \.topics.deadLetters, nonEmpty: true),
            .text("topics.state", \.topics.state, nonEmpty: true),
            Setting(
                key: "delivery.mode",
                apply: { (text, configuration) throws(Error) in
                    guard let mode = GatewayConfiguration.DeliveryMode(text) else {
                        throw Error(
                            key: "delivery.mode", message: "must be exactly-once or at-least-once, not '\(text)'")
                    }
                    configuration.deliveryMode = mode
                }, show: { $0.deliveryMode.rawValue }),
            .boolean(
                "delivery.commitGroupOffsets", \.commitGroupOffsets,
                show: { $0.map { "\($0)" } ?? "(with the embedded broker)" }),
            .integer("commit.intervalMs", \.commitIntervalMilliseconds, 10...60_000),
            .integer("commit.replayBackoffMs", \.replayBackoffMilliseconds, 0...60_000),
            .integer("commit.replayBackoffMaxMs", \.replayBackoffMaxMilliseconds, 0...60_000),
            .integer("commit.maxAttemptsPerInput", \.maxAttemptsPerInput, 1...100),
            .integer("workers", \.workers, 1...256),
            Setting(
                key: "instance.name",
                apply: { (text, configuration) throws(Error) in
                    let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
                    guard text.count <= 200, text.allSatisfy(allowed.contains) else {
                        throw Error(
                            key: "instance.name",
                            message: "is at most 200 letters, digits, '.', '_' or '-', not '\(text)'")
                    }
                    configuration.instanceName = text
                },
                show: {
                    $0.instanceName.isEmpty ? "(host name-admin port: \($0.resolvedInstanceName))" : $0.instanceName
                }),
            .integer("readiness.kafkaTimeoutSeconds", \.readinessKafkaTimeoutSeconds, 6...3600),
            .integer("readiness.loopTimeoutSeconds", \.readinessLoopTimeoutSeconds, 1...3600),
            .text("store.kind", \.storeKind, oneOf: ["sqlite", "postgres"]),
            .text("store.sqlite.path", \.sqlitePath),
            .text("store.postgres.url", \.postgresURL, show: { Self.redactingPassword($0) }),
            .integer("cache.maxEntries", \.cacheMaxEntries, 1...100_000_000),
            .integer("cache.loadTimeoutMs", \.cacheLoadTimeoutMilliseconds, 10...600_000),
            .text("admin.host", \.adminHost),
            .integer("admin.port", \.adminPort, 1...65535),
            .text("admin.token", \.adminToken, show: { $0.isEmpty ? "" : "<redacted>" }),
            .boolean("admin.allowUnauthenticated", \.adminAllowUnauthenticated),
            .integer("admin.idleTimeoutSeconds", \.adminIdleTimeoutSeconds, 1...3600),
            .integer("admin.requestTimeoutSeconds", \.adminRequestTimeoutSeconds, 1...300),
            .integer("admin.maxConnections", \.adminMaxConnections, 1...65_536),
            Setting(
                key: "admin.peers",
                apply: { (text, configuration) throws(Error) in
                    var peers: [String] = []
                    for entry in text.split(separator: ",") {
                        guard let address = PeerInstances.Address(entry) else {
                            throw Error(
                                key: "admin.peers",
                                message: "lists host:port entries separated by commas, not '\(entry)'")
                        }
                        peers.append(address.description)
                    }
                    configuration.adminPeers = peers
                }, show: { $0.adminPeers.joined(separator: ",") }),
            .integer("limits.maxEventBytes", \.maxEventBytes, 64...16_777_216),
            .integer("badges.maxUnreadPerApp", \.maxUnreadPerApp, 1...100_000),
            .integer("dedupe.windowPerUser", \.dedupeWindowPerUser, 1...100_000),
            .integer("summaries.maxItemsPerApp", \.summaryItemsPerApp, 0...100),
            .integer("people.repeatedWindowSeconds", \.repeatedWindowSeconds, 1...86_400),
            .integer("timers.maxFiredPerBatch", \.maxTimersPerBatch, 1...1_000_000),
            .integer("state.retentionMs", \.stateRetentionMilliseconds, 0...Self.maxRetentionMilliseconds),
            .integer("rateLimits.perUser.max", \.rateLimitPerUser, 0...FocusContext.maxRateLimit),
            .integer(
                "rateLimits.perUser.windowSeconds", \.rateLimitPerUserWindowSeconds,
                1...FocusContext.maxRateWindowSeconds),
            .integer("rateLimits.perApp.max", \.rateLimitPerApp, 0...FocusContext.maxRateLimit),
            .integer(
                "rateLimits.perApp.windowSeconds", \.rateLimitPerAppWindowSeconds,
                1...FocusContext.maxRateWindowSeconds),
            Setting(
                key: "rateLimits.exempt",
                apply: { (text, configuration) throws(Error) in
                    var exempt: [FocusContext.RateLimits.Exemption] = []
                    for name in text.split(separator: ",") {
                        let trimmed = name.trimmingCharacters(in: .whitespaces)
                        guard let exemption = FocusContext.RateLimits.Exemption(rawValue: trimmed) else {
                            throw Error(
                                key: "rateLimits.exempt",
                                message: "lists critical, time-sensitive or allowed-senders, not '\(trimmed)'")
                        }
                        exempt.append(exemption)
                    }
                    configuration.rateLimitExempt = exempt
                }, show: { $0.rateLimitExempt.map(\.rawValue).joined(separator: ",") }),
            .text(
                "log.level", \.logLevel, oneOf: ["trace", "debug", "info", "notice", "warning", "error", "critical"]),
            .text("log.format", \.logFormat, oneOf: ["text", "json"]),
        ]
    }

    /// Every scalar key, in the order `focusgate config` prints them.
    public static var keys: [String] { self.settings.map(\.key) }

    /// The keys whose value is a comma-separated list, which the file may also give as a YAML list.
    static let listKeys: Set<String> = ["admin.peers", "rateLimits.exempt"]

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
        let variables = Dictionary(uniqueKeysWithValues: self.keys.map { (self.environmentName($0), $0) })
        let prefix = "FOCUSGATE_KAFKA_PROPERTIES_"
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix("FOCUSGATE_") {
            if let key = variables[name] {
                values[key] = value
            } else if name.hasPrefix(prefix) && name.count > prefix.count {
                properties[name.dropFirst(prefix.count).lowercased().replacingOccurrences(of: "_", with: ".")] = value
            } else {
                // A misspelt variable would otherwise leave its setting at the default (an empty
                // kafka.bootstrapServers starts the in-memory embedded broker).
                let closest = variables.keys.min { Self.distance(name, $0) < Self.distance(name, $1) } ?? ""
                throw Error(
                    key: name,
                    message: "is not a configuration variable; the closest is \(closest) (\(variables[closest] ?? ""))")
            }
        }
        for property in properties.keys.sorted() where Self.ownedProperties.contains(property) {
            throw Error(
                key: "kafka.properties.\(property)",
                message: "is set by FocusGate itself (delivery guarantees depend on it) and cannot be passed through")
        }
        return try self.parse(values, properties: properties)
    }

    /// librdkafka properties FocusGate sets from its own keys or needs as it sets them: exactly-once
    /// and at-least-once depend on them (docs/contract.md, Configuration).
    public static let ownedProperties: Set<String> = [
        "bootstrap.servers", "group.id", "group.instance.id", "transactional.id", "enable.idempotence",
        "enable.gapless.guarantee", "delivery.report.only.error", "isolation.level", "enable.auto.commit",
        "enable.auto.offset.store",
        "auto.offset.reset", "partition.assignment.strategy",
    ]

    /// The edit distance between two names (Levenshtein), for the closest-key hint.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(1, b.count) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    private static func parse(_ values: [String: String], properties: [String: String]) throws(Error)
        -> ServerConfiguration
    {
        var configuration = ServerConfiguration()
        configuration.kafkaProperties = properties
        for setting in self.settings {
            if let text = values[setting.key] { try setting.apply(text, &configuration) }
        }
        if configuration.replayBackoffMaxMilliseconds < configuration.replayBackoffMilliseconds {
            throw Error(
                key: "commit.replayBackoffMaxMs",
                message: "must be at least commit.replayBackoffMs (\(configuration.replayBackoffMilliseconds))")
        }
        // Anyone who reaches the admin API can rewrite any user's context.
        if !configuration.adminHostIsLoopback && configuration.adminToken.isEmpty
            && !configuration.adminAllowUnauthenticated
        {
            throw Error(
                key: "admin.host",
                message: """
                    is \(configuration.adminHost), beyond loopback: set admin.token (or, on a network that only \
                    trusted clients reach, admin.allowUnauthenticated: true)
                    """)
        }
        if !configuration.adminHostIsLoopback, !configuration.adminToken.isEmpty,
            let weakness = Self.weakness(ofAdminToken: configuration.adminToken)
        {
            throw Error(
                key: "admin.token",
                message: """
                    \(weakness), and admin.host (\(configuration.adminHost)) is beyond loopback: set a random secret \
                    of at least \(Self.minimumAdminTokenBytes) bytes (openssl rand -hex 32)
                    """)
        }
        // Every input record up to limits.maxEventBytes (key, value and headers) is copied to an
        // output or the DLQ with FocusGate's own headers, which must fit the producer's limit.
        let messageMaxBytes = configuration.producerMessageMaxBytes
        if configuration.maxEventBytes + Self.ownHeaderBytes > messageMaxBytes {
            throw Error(
                key: "limits.maxEventBytes",
                message: """
                    \(configuration.maxEventBytes) and FocusGate's own headers (up to \(Self.ownHeaderBytes) bytes) \
                    exceed the producer's message.max.bytes (\(messageMaxBytes)): lower it, or raise \
                    kafka.properties message.max.bytes and the output topics' max.message.bytes
                    """)
        }
        #if !PostgreSQL
            if configuration.storeKind == "postgres" { throw Error.noPostgreSQL }
        #endif
        if configuration.storeKind == "postgres" && configuration.postgresURL.isEmpty {
            throw Error(key: "store.postgres.url", message: "is required when store.kind is postgres")
        }
        return configuration
    }

    /// What FocusGate's own headers may add to a copied input record: the decision's (a Focus
    /// name and ids of at most 256 bytes each, the source, the instant) or the DLQ's (a code, a
    /// detail of at most 1 KiB, the source), with librdkafka's framing of each.
    static let ownHeaderBytes = 4096

    /// The shortest admin token accepted beyond loopback: 32 bytes, as `openssl rand -hex 16` gives.
    static let minimumAdminTokenBytes = 32

    /// Words that mark a token as a template's value rather than a secret someone chose.
    static let placeholderTokenWords = [
        "change-me", "changeme", "change_me", "replace-me", "replaceme", "placeholder", "example", "your-token",
        "secret-here", "token-here",
    ]

    /// Why `token` is no secret to guard an admin API that other machines reach, or `nil` when it may be one.
    static func weakness(ofAdminToken token: String) -> String? {
        let lowered = token.lowercased()
        if let word = self.placeholderTokenWords.first(where: { lowered.contains($0) }) {
            return "is a placeholder (it contains \"\(word)\")"
        }
        if token.utf8.count < self.minimumAdminTokenBytes {
            return "is \(token.utf8.count) bytes, shorter than \(self.minimumAdminTokenBytes)"
        }
        if Set(token.utf8).count < 8 {
            return "repeats too few characters (\(Set(token.utf8).count) different ones) to be a random secret"
        }
        return nil
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
                case .sequence(let items) where Self.listKeys.contains(key):
                    // A list key (`admin.peers`, `rateLimits.exempt`) also takes a YAML list.
                    let texts = items.compactMap { $0.scalar?.string }
                    guard texts.count == items.count else {
                        throw Error(key: key, message: "must be a list of scalar values")
                    }
                    values[key] = texts.joined(separator: ",")
                default:
                    throw Error(key: key, message: "must be a scalar value")
                }
            }
        }
        try walk(mapping, path: "")
    }

    /// The effective configuration as `key: value` lines, secrets redacted (`focusgate config`);
    /// `kafka.properties.*` follow `kafka.groupId`.
    public func describe() -> [(key: String, value: String)] {
        var lines: [(key: String, value: String)] = []
        for setting in Self.settings {
            lines.append((setting.key, setting.show(self)))
            guard setting.key == "kafka.groupId" else { continue }
            for (property, value) in self.kafkaProperties.sorted(by: { $0.key < $1.key }) {
                lines.append(("kafka.properties.\(property)", Self.isSecret(property) ? "<redacted>" : value))
            }
        }
        return lines
    }

    private static func isSecret(_ property: String) -> Bool {
        ["password", "secret", "key", "token", "jaas", "credentials"].contains { property.lowercased().contains($0) }
    }

    fileprivate static func redactingPassword(_ url: String) -> String {
        // postgres://user:password@host/db → postgres://user:<redacted>@host/db
        guard let scheme = url.range(of: "://"), let at = url.range(of: "@", range: scheme.upperBound..<url.endIndex),
            let colon = url.range(of: ":", range: scheme.upperBound..<at.lowerBound)
        else { return url }
        return url.replacingCharacters(in: colon.upperBound..<at.lowerBound, with: "<redacted>")
    }
}

extension ServerConfiguration.Setting {
    /// A text key; `nonEmpty` refuses an empty value, `oneOf` anything but those values.
    static func text(
        _ key: String, _ path: WritableKeyPath<ServerConfiguration, String>, nonEmpty: Bool = false,
        oneOf choices: [String]? = nil, show: @escaping (String) -> String = { $0 }
    ) -> Self {
        Self(
            key: key,
            apply: { (text, configuration) throws(ServerConfiguration.Error) in
                if nonEmpty && text.isEmpty { throw .init(key: key, message: "must not be empty") }
                if let choices, !choices.contains(text) {
                    let listed = choices.dropLast().joined(separator: ", ") + " or " + choices.last!
                    throw .init(key: key, message: "must be \(listed), not '\(text)'")
                }
                configuration[keyPath: path] = text
            }, show: { show($0[keyPath: path]) })
    }

    /// A `true` or `false` key; `Flag` is `Bool`, or `Bool?` for a key whose default depends on
    /// something else (`show` says what).
    static func boolean<Flag>(
        _ key: String, _ path: WritableKeyPath<ServerConfiguration, Flag>,
        show: @escaping (Flag) -> String = { "\($0)" }
    ) -> Self where Flag: ConfigurationFlag {
        Self(
            key: key,
            apply: { (text, configuration) throws(ServerConfiguration.Error) in
                guard let flag = Bool(text) else {
                    throw .init(key: key, message: "must be true or false, not '\(text)'")
                }
                configuration[keyPath: path] = Flag(flag)
            }, show: { show($0[keyPath: path]) })
    }

    /// An integer key within `range`.
    static func integer<Value: FixedWidthInteger>(
        _ key: String, _ path: WritableKeyPath<ServerConfiguration, Value>, _ range: ClosedRange<Int>
    ) -> Self {
        Self(
            key: key,
            apply: { (text, configuration) throws(ServerConfiguration.Error) in
                guard let number = Int(text), range.contains(number) else {
                    throw .init(
                        key: key,
                        message: "must be an integer in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
                }
                configuration[keyPath: path] = Value(number)
            }, show: { "\($0[keyPath: path])" })
    }
}

/// `Bool` and `Bool?`, made from a parsed flag (``ServerConfiguration/Setting/boolean(_:_:show:)``).
protocol ConfigurationFlag {
    init(_ flag: Bool)
}

extension Bool: ConfigurationFlag {}

extension Optional: ConfigurationFlag where Wrapped == Bool {
    init(_ flag: Bool) { self = .some(flag) }
}
