import FocusGateCore
import Foundation

/// The table both stores use, and the document codec.
///
///     focus_contexts(user_id TEXT PRIMARY KEY, version BIGINT NOT NULL, document TEXT NULL, updated_at …)
///
/// `document` is the context's JSON; NULL marks a deleted context whose version still counts.
enum ContextStoreSchema {
    /// Statements applied in order, once each, recorded in `focusgate_migrations`.
    static func migrations(bigint: String, timestamp: String) -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS focus_contexts (
                user_id TEXT PRIMARY KEY,
                version \(bigint) NOT NULL,
                document TEXT,
                updated_at \(timestamp) NOT NULL DEFAULT CURRENT_TIMESTAMP
            )
            """
        ]
    }

    /// Decodes a stored document. A document that no longer validates is reported, not hidden.
    static func decode(_ document: String, userID: String) throws(ContextStoreError) -> FocusContext {
        do {
            return try FocusContext.decode(from: Data(document.utf8))
        } catch {
            throw ContextStoreError(
                code: "corrupt", message: "stored context of a user does not decode: \(error.code) \(error.field ?? "")"
            )
        }
    }

    static func encode(_ context: FocusContext) -> String {
        String(decoding: context.encoded(), as: UTF8.self)
    }

    /// Largest number of users per load query: a consumed batch (up to 10,000 records) is one
    /// query. SQLite allows 32,766 bound variables; PostgreSQL takes one array parameter.
    static let batchLimit = 10_000
}
