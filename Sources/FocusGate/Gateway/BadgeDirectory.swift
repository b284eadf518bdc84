public import FocusGateCore
import Synchronization

/// The committed badges of the users whose partitions this instance owns, for
/// `GET /v1/users/{id}/badges`.
///
/// Workers publish the badges of the users a commit changed (one lock per commit) and forget the
/// users of revoked partitions; the HTTP handler reads without touching a worker's state.
public final class BadgeDirectory: BadgeReading, Sendable {
    private let badges = Mutex<[String: [Badge]]>([:])

    public init() {}

    public func badges(userID: String) async -> [Badge] {
        self.badges.withLock { $0[userID] ?? [] }
    }

    /// Replaces the badges of the given users (an empty list removes the user).
    func publish(_ changed: [(userID: String, badges: [Badge])]) {
        guard !changed.isEmpty else { return }
        self.badges.withLock { badges in
            for (userID, list) in changed {
                badges[userID] = list.isEmpty ? nil : list
            }
        }
    }

    /// Forgets users whose partition moved away.
    func remove(_ userIDs: [String]) {
        guard !userIDs.isEmpty else { return }
        self.badges.withLock { badges in
            for userID in userIDs { badges[userID] = nil }
        }
    }
}
