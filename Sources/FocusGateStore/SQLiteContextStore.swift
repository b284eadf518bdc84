public import FocusGateCore
public import Logging
import NIOCore
import SQLiteNIO

/// The embedded store: one SQLite file in WAL mode.
public final class SQLiteContextStore: ContextStore {
    private let connection: SQLiteConnection
    /// The database file.
    public let path: String

    private init(connection: SQLiteConnection, path: String) {
        self.connection = connection
        self.path = path
    }

    /// Opens (creating if needed) the database at `path` and applies migrations.
    ///
    /// - Throws: ``ContextStoreError`` when the file cannot be opened or migrated.
    public static func open(path: String, logger: Logger) async throws(ContextStoreError) -> SQLiteContextStore {
        do {
            let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            let store = SQLiteContextStore(connection: connection, path: path)
            for pragma in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=5000"] {
                _ = try await connection.query(pragma)
            }
            try await store.migrate()
            return store
        } catch let error as ContextStoreError {
            throw error
        } catch {
            throw ContextStoreError.unavailable(error, "open \(path)")
        }
    }

    /// Closes the database.
    public func close() async {
        try? await self.connection.close()
    }

    deinit {
        // sqlite-nio requires an explicit close; the close operation keeps the connection alive until done.
        if !self.connection.isClosed {
            _ = self.connection.close() as EventLoopFuture<Void>
        }
    }

    private func migrate() async throws {
        _ = try await self.connection.query(
            "CREATE TABLE IF NOT EXISTS focusgate_migrations (version INTEGER PRIMARY KEY)")
        let applied = try await self.connection.query(
            "SELECT COALESCE(MAX(version), 0) AS version FROM focusgate_migrations")
        let current = applied.first?.column("version")?.integer ?? 0
        for (index, statement) in ContextStoreSchema.migrations(bigint: "INTEGER", timestamp: "TEXT").enumerated()
        where index + 1 > current {
            _ = try await self.connection.query("BEGIN")
            _ = try await self.connection.query(statement)
            _ = try await self.connection.query(
                "INSERT INTO focusgate_migrations (version) VALUES (?)", [.integer(index + 1)])
            _ = try await self.connection.query("COMMIT")
        }
    }

    // MARK: - ContextStore

    public func contexts(for userIDs: [String]) async throws(ContextStoreError) -> [UserID: FocusContext] {
        var result: [UserID: FocusContext] = [:]
        for chunk in Set(userIDs.map { UserID($0) }).map(\.string).chunked(ContextStoreSchema.batchLimit) {
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let rows: [SQLiteRow]
            do {
                rows = try await self.connection.query(
                    "SELECT user_id, document FROM focus_contexts WHERE document IS NOT NULL AND user_id IN (\(placeholders))",
                    chunk.map { .text($0) }
                )
            } catch {
                throw ContextStoreError.unavailable(error, "load contexts")
            }
            for row in rows {
                guard let userID = row.column("user_id")?.string, let document = row.column("document")?.string else {
                    continue
                }
                result[UserID(userID)] = try ContextStoreSchema.decode(document, userID: userID)
            }
        }
        return result
    }

    public func put(_ context: FocusContext) async throws(ContextStoreError) -> ContextWriteOutcome {
        do {
            let written = try await self.connection.query(
                """
                INSERT INTO focus_contexts (user_id, version, document, updated_at) VALUES (?, ?, ?, CURRENT_TIMESTAMP)
                ON CONFLICT (user_id) DO UPDATE SET version = excluded.version, document = excluded.document, updated_at = excluded.updated_at
                WHERE excluded.version > focus_contexts.version
                RETURNING version
                """,
                [.text(context.userID), .integer(Int(context.version)), .text(ContextStoreSchema.encode(context))]
            )
            if !written.isEmpty { return .stored }
            let current = try await self.connection.query(
                "SELECT version FROM focus_contexts WHERE user_id = ?", [.text(context.userID)])
            return .stale(currentVersion: Int64(current.first?.column("version")?.integer ?? 0))
        } catch {
            throw ContextStoreError.unavailable(error, "store context")
        }
    }

    public func delete(userID: String) async throws(ContextStoreError) -> Int64? {
        do {
            let rows = try await self.connection.query(
                "UPDATE focus_contexts SET document = NULL, updated_at = CURRENT_TIMESTAMP WHERE user_id = ? AND document IS NOT NULL RETURNING version",
                [.text(userID)]
            )
            return rows.first?.column("version")?.integer.map(Int64.init)
        } catch {
            throw ContextStoreError.unavailable(error, "delete context")
        }
    }

    public func ping() async throws(ContextStoreError) {
        do {
            _ = try await self.connection.query("SELECT 1")
        } catch {
            throw ContextStoreError.unavailable(error, "ping")
        }
    }
}

extension Collection {
    /// Consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [[Element]] {
        var chunks: [[Element]] = []
        var current: [Element] = []
        current.reserveCapacity(Swift.min(size, self.count))
        for element in self {
            current.append(element)
            if current.count == size {
                chunks.append(current)
                current.removeAll(keepingCapacity: true)
            }
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks
    }
}

// MARK: - Bulk loading

extension SQLiteContextStore {
    /// Inserts many contexts in one transaction, 500 rows per statement, without version checks:
    /// for filling a benchmark or test database, not for production writes.
    public func bulkInsertForBenchmark(_ contexts: [FocusContext]) async throws {
        _ = try await self.connection.query("BEGIN")
        for chunk in contexts.chunked(500) {
            let placeholders = Array(repeating: "(?, ?, ?, CURRENT_TIMESTAMP)", count: chunk.count).joined(
                separator: ",")
            let binds: [SQLiteData] = chunk.flatMap {
                [.text($0.userID), .integer(Int($0.version)), .text(ContextStoreSchema.encode($0))]
            }
            _ = try await self.connection.query(
                "INSERT OR REPLACE INTO focus_contexts (user_id, version, document, updated_at) VALUES \(placeholders)",
                binds)
        }
        _ = try await self.connection.query("COMMIT")
    }
}
