public import FocusGateCore

/// The source of truth for Focus contexts (docs/contract.md, "Invalidations and the context store").
///
/// Writes are version-checked: a context replaces the stored one only when its version is newer,
/// and a deleted context leaves its version behind, so a late or replayed write never wins.
public protocol ContextStore: Sendable {
    /// Loads the contexts of these users with one query; users without a context are absent.
    /// Keyed by ``UserID``: ids are compared as their bytes, as the stores' `user_id` columns are.
    ///
    /// - Throws: ``ContextStoreError`` when the store cannot answer.
    func contexts(for userIDs: [String]) async throws(ContextStoreError) -> [UserID: FocusContext]

    /// Stores `context` if its version is newer than the stored (or deleted) one.
    ///
    /// - Returns: `.stored`, or `.stale` with the version the store already has.
    func put(_ context: FocusContext) async throws(ContextStoreError) -> ContextWriteOutcome

    /// Deletes a user's context, keeping its version as a floor for later writes.
    ///
    /// - Returns: The deleted context's version, or `nil` when there was none.
    func delete(userID: String) async throws(ContextStoreError) -> Int64?

    /// Answers when the store is reachable (readiness).
    func ping() async throws(ContextStoreError)

    /// Releases the store's connections and files; no call may follow.
    func close() async
}

extension ContextStore {
    /// Loads one user's context.
    public func context(for userID: String) async throws(ContextStoreError) -> FocusContext? {
        try await self.contexts(for: [userID])[UserID(userID)]
    }
}

/// What a versioned write did.
public enum ContextWriteOutcome: Sendable, Hashable {
    /// The context is now the stored one.
    case stored
    /// The store has this version (or a newer one) already; nothing changed.
    case stale(currentVersion: Int64)
}

/// A store failure. Never contains context contents.
public struct ContextStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `unavailable` (cannot reach or use the store), `timeout`, `corrupt` (a stored document no longer decodes).
    public var code: String
    /// What happened.
    public var message: String

    /// Creates an error.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(self.code): \(self.message)" }

    static func unavailable(_ error: any Error, _ context: String) -> ContextStoreError {
        ContextStoreError(code: "unavailable", message: "\(context): \(String(reflecting: error).prefix(300))")
    }
}
