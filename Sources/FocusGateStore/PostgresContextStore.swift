#if PostgreSQL
    public import FocusGateCore
    import Foundation
    public import Logging
    import NIOSSL
    import PostgresNIO

    /// The production store: PostgreSQL through a small reconnecting connection pool
    /// (``PostgresConnectionPool``). Call ``migrate()`` once at start.
    public final class PostgresContextStore: ContextStore {
        private let pool: PostgresConnectionPool
        private let logger: Logger

        /// Creates a store for a `postgres://user:password@host:port/database?sslmode=…` URL.
        ///
        /// `sslmode` is `verify-full` (default: the server's certificate and name checked against
        /// `sslrootcert`, a CA file, or the system's roots), `verify-ca` (the certificate only),
        /// `require` (encrypted, nothing checked) or `disable`; `prefer` is refused, since it falls
        /// back to plaintext without saying so.
        ///
        /// - Throws: ``ContextStoreError`` when the URL cannot be used.
        public init(url: String, maximumConnections: Int = 10, logger: Logger) throws(ContextStoreError) {
            var configuration = try Self.configuration(url)
            configuration.options.connectTimeout = .seconds(3)
            self.pool = PostgresConnectionPool(
                configuration: configuration, maximumConnections: maximumConnections, logger: logger)
            self.logger = logger
        }

        /// Closes the pool's connections.
        public func close() async {
            await self.pool.close()
        }

        /// Creates the schema if needed; applies each migration once, in a transaction.
        public func migrate() async throws(ContextStoreError) {
            do {
                try await self.pool.withConnection { connection in
                    try await connection.query(
                        "CREATE TABLE IF NOT EXISTS focusgate_migrations (version INTEGER PRIMARY KEY)",
                        logger: self.logger
                    )
                    // Concurrent instances starting together serialize on this lock.
                    try await connection.query("SELECT pg_advisory_lock(7264011)", logger: self.logger)
                    defer {
                        Task { try? await connection.query("SELECT pg_advisory_unlock(7264011)", logger: self.logger) }
                    }
                    let rows = try await connection.query(
                        "SELECT COALESCE(MAX(version), 0) FROM focusgate_migrations", logger: self.logger)
                    var current = 0
                    for try await (version, ) in rows.decode((Int,).self) { current = version }
                    for (index, statement) in ContextStoreSchema.migrations(bigint: "BIGINT", timestamp: "TIMESTAMPTZ")
                        .enumerated() where index + 1 > current
                    {
                        try await connection.query("BEGIN", logger: self.logger)
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                        try await connection.query(
                            "INSERT INTO focusgate_migrations (version) VALUES (\(index + 1))", logger: self.logger)
                        try await connection.query("COMMIT", logger: self.logger)
                    }
                }
            } catch {
                throw ContextStoreError.unavailable(error, "migrate")
            }
        }

        // MARK: - ContextStore

        public func contexts(for userIDs: [String]) async throws(ContextStoreError) -> [UserID: FocusContext] {
            var result: [UserID: FocusContext] = [:]
            for chunk in Set(userIDs.map { UserID($0) }).map(\.string).chunked(ContextStoreSchema.batchLimit) {
                var documents: [(String, String)] = []
                do {
                    documents = try await self.pool.withConnection { connection in
                        let rows = try await connection.query(
                            "SELECT user_id, document FROM focus_contexts WHERE document IS NOT NULL AND user_id = ANY(\(chunk))",
                            logger: self.logger
                        )
                        var found: [(String, String)] = []
                        for try await (userID, document) in rows.decode((String, String).self) {
                            found.append((userID, document))
                        }
                        return found
                    }
                } catch {
                    throw ContextStoreError.unavailable(error, "load contexts")
                }
                for (userID, document) in documents {
                    result[UserID(userID)] = try ContextStoreSchema.decode(document, userID: userID)
                }
            }
            return result
        }

        public func put(_ context: FocusContext) async throws(ContextStoreError) -> ContextWriteOutcome {
            let document = ContextStoreSchema.encode(context)
            do {
                return try await self.pool.withConnection { connection in
                    let rows = try await connection.query(
                        """
                        INSERT INTO focus_contexts (user_id, version, document, updated_at) VALUES (\(context.userID), \(context.version), \(document), now())
                        ON CONFLICT (user_id) DO UPDATE SET version = excluded.version, document = excluded.document, updated_at = excluded.updated_at
                        WHERE excluded.version > focus_contexts.version
                        RETURNING version
                        """,
                        logger: self.logger
                    )
                    var stored = false
                    for try await _ in rows.decode((Int64,).self) { stored = true }
                    if stored { return .stored }
                    let current = try await connection.query(
                        "SELECT version FROM focus_contexts WHERE user_id = \(context.userID)", logger: self.logger)
                    var version: Int64 = 0
                    for try await (value, ) in current.decode((Int64,).self) { version = value }
                    return .stale(currentVersion: version)
                }
            } catch {
                throw ContextStoreError.unavailable(error, "store context")
            }
        }

        public func delete(userID: String) async throws(ContextStoreError) -> Int64? {
            do {
                return try await self.pool.withConnection { connection in
                    let rows = try await connection.query(
                        "UPDATE focus_contexts SET document = NULL, updated_at = now() WHERE user_id = \(userID) AND document IS NOT NULL RETURNING version",
                        logger: self.logger
                    )
                    var deleted: Int64?
                    for try await (version, ) in rows.decode((Int64,).self) { deleted = version }
                    return deleted
                }
            } catch {
                throw ContextStoreError.unavailable(error, "delete context")
            }
        }

        public func ping() async throws(ContextStoreError) {
            do {
                try await self.pool.withConnection { connection in
                    _ = try await connection.query("SELECT 1", logger: self.logger)
                }
            } catch {
                throw ContextStoreError.unavailable(error, "ping")
            }
        }

        // MARK: - Configuration

        private static func configuration(_ url: String) throws(ContextStoreError) -> PostgresConnection.Configuration {
            guard let components = URLComponents(string: url),
                ["postgres", "postgresql"].contains(components.scheme ?? ""),
                let host = components.host, let user = components.user
            else {
                throw ContextStoreError(
                    code: "invalid-url",
                    message: "store.postgres.url must look like postgres://user:password@host:5432/database")
            }
            let database = components.path.isEmpty ? nil : String(components.path.dropFirst())
            let query = components.queryItems ?? []
            let mode = query.first { $0.name == "sslmode" }?.value ?? "verify-full"
            let rootCertificate = query.first { $0.name == "sslrootcert" }?.value
            let tls: PostgresConnection.Configuration.TLS
            do {
                var client = TLSConfiguration.makeClientConfiguration()
                if let rootCertificate {
                    guard FileManager.default.isReadableFile(atPath: rootCertificate) else {
                        throw ContextStoreError(
                            code: "invalid-url", message: "sslrootcert \(rootCertificate) cannot be read")
                    }
                    client.trustRoots = .file(rootCertificate)
                }
                switch mode {
                case "disable":
                    tls = .disable
                case "require":
                    // Encrypted, the server's certificate not checked (libpq's meaning).
                    client.certificateVerification = .none
                    tls = .require(try NIOSSLContext(configuration: client))
                case "verify-ca":
                    client.certificateVerification = .noHostnameVerification
                    tls = .require(try NIOSSLContext(configuration: client))
                case "verify-full":
                    client.certificateVerification = .fullVerification
                    tls = .require(try NIOSSLContext(configuration: client))
                case "prefer", "allow":
                    throw ContextStoreError(
                        code: "invalid-url",
                        message:
                            "sslmode=\(mode) falls back to plaintext without saying so: use verify-full (the default), verify-ca or require, or disable on a trusted network"
                    )
                default:
                    throw ContextStoreError(
                        code: "invalid-url", message: "sslmode must be verify-full, verify-ca, require or disable")
                }
            } catch let error as ContextStoreError {
                throw error
            } catch {
                throw ContextStoreError(code: "invalid-url", message: "TLS setup failed: \(error)")
            }
            return PostgresConnection.Configuration(
                host: host, port: components.port ?? 5432, username: user,
                password: components.password?.removingPercentEncoding, database: database, tls: tls
            )
        }
    }
#endif
