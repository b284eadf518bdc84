import FocusGateCore
import Foundation
import Hummingbird

// MARK: - What the instances hold of a user: badges and recent decisions

/// An instance's own answer about a user, for its peers: whether it holds the user, else which
/// input partitions it holds.
protocol InstanceAnswer: Decodable {
    var userId: String { get }
    var held: Bool { get }
    var partitions: [Int32] { get }
    var partitionCount: Int { get }
}

extension InstanceBadges: InstanceAnswer {}
extension InstanceNotifications: InstanceAnswer {}
extension InstanceNotification: InstanceAnswer {}

extension AdminAPI {
    /// Who answered about a user.
    enum Owner<Local, Remote> {
        /// A worker of this instance holds the user.
        case here(Local)
        /// A peer holds the user.
        case peer(Remote)
        /// The instances that answered hold every input partition between them, and none holds
        /// the user: the state has nothing of the user.
        case nobody
    }

    /// This instance's answer when a worker here holds the user, else the first peer's that
    /// says it does (`GET instancePath`). Nobody only when the instances that answered hold every
    /// input partition between them; otherwise, as while partitions move or a peer does not
    /// answer, `503 owner-unavailable` with `Retry-After`.
    func owner<Local, Remote: InstanceAnswer>(
        of userID: String, local: LocalAnswer<Local>, instancePath: String, as _: Remote.Type
    ) async throws -> Owner<Local, Remote> {
        var (covered, partitionCount): (Set<Int32>, Int)
        switch local {
        case .held(let value):
            return .here(value)
        case .notHeld(let partitions, let count):
            (covered, partitionCount) = (partitions, count)
        }
        if !self.peers.addresses.isEmpty {
            for body in await self.peers.get(instancePath) {
                guard let answer = try? JSONDecoder().decode(Remote.self, from: Data(body)),
                    UserID.sameBytes(answer.userId, userID)
                else { continue }
                if answer.held { return .peer(answer) }
                covered.formUnion(answer.partitions)
                partitionCount = max(partitionCount, answer.partitionCount)
            }
        }
        if partitionCount > 0, (0..<Int32(partitionCount)).allSatisfy(covered.contains) {
            return .nobody
        }
        throw AdminError(
            .serviceUnavailable, "owner-unavailable",
            "no instance that answered holds the user's partition: \(covered.count) of \(partitionCount) input partitions held (partitions moving, a restore, \(self.peers.addresses.isEmpty ? "no admin.peers set" : "a peer not answering")); retry",
            retryAfterSeconds: 1)
    }

    /// The peer path of an instance answer: `/v1/instance/users/{userId}/` + `rest`.
    private static func instancePath(_ userID: String, _ rest: String) -> String {
        "/v1/instance/users/\(Self.pathSegment(userID))/\(rest)"
    }

    private func reader() throws -> any UserStateReading {
        guard let reader = self.users else {
            throw AdminError(
                .serviceUnavailable, "badges-unavailable",
                "badges and decisions are kept by the notification pipeline, which this instance does not run")
        }
        return reader
    }

    // MARK: Badges

    /// The user's badges from whichever instance holds the user; `[]` when none does.
    func getBadges(_ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        let local = try await self.reader().badges(userID: userID)
        switch try await self.owner(
            of: userID, local: local, instancePath: Self.instancePath(userID, "badges"), as: InstanceBadges.self)
        {
        case .here(let badges): return Self.json(UserBadges(userId: userID, badges: badges.map(UserBadges.Item.init)))
        case .peer(let answer): return Self.json(UserBadges(userId: userID, badges: answer.badges))
        case .nobody: return Self.json(UserBadges(userId: userID, badges: []))
        }
    }

    /// This instance's own answer about a user's badges, for its peers' ``getBadges(_:)``.
    func getInstanceBadges(_ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        switch try await self.reader().badges(userID: userID) {
        case .held(let badges):
            return Self.json(
                InstanceBadges(
                    userId: userID, held: true, badges: badges.map(UserBadges.Item.init), partitions: [],
                    partitionCount: 0))
        case .notHeld(let partitions, let count):
            return Self.json(
                InstanceBadges(
                    userId: userID, held: false, badges: [], partitions: partitions.sorted(), partitionCount: count))
        }
    }

    // MARK: Recent decisions

    /// The user's remembered notifications, newest first, from whichever instance holds the user.
    func getHistory(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        let query = try Self.historyQuery(request)
        let local = try await self.reader().history(userID: userID, query: query)
        let path = Self.instancePath(userID, "notifications") + Self.queryString(request)
        switch try await self.owner(of: userID, local: local, instancePath: path, as: InstanceNotifications.self) {
        case .here(let page):
            return Self.json(UserNotifications(userId: userID, page: page))
        case .peer(let answer):
            return Self.json(
                UserNotifications(
                    userId: userID, notifications: answer.notifications, nextCursor: answer.nextCursor))
        case .nobody:
            return Self.json(UserNotifications(userId: userID, notifications: [], nextCursor: nil))
        }
    }

    /// One of the user's notifications as the state remembers it; `404` when it does not.
    func getNotification(_ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        let id = try Self.pathParameter("notificationId", context)
        let local = try await self.reader().notification(userID: userID, id: id)
        let path = Self.instancePath(userID, "notifications/\(Self.pathSegment(id))")
        switch try await self.owner(of: userID, local: local, instancePath: path, as: InstanceNotification.self) {
        case .here(.found(let item)):
            return Self.json(NotificationRecord(item))
        case .here(.notRemembered(let forgotten)):
            throw Self.notRemembered(id, forgotten: forgotten)
        case .peer(let answer):
            guard let record = answer.notification else { throw Self.notRemembered(id, forgotten: answer.forgotten) }
            return Self.json(record)
        case .nobody:
            throw Self.notRemembered(id, forgotten: false)
        }
    }

    /// This instance's own page of a user's history, for its peers' ``getHistory(_:_:)``.
    func getInstanceHistory(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        let query = try Self.historyQuery(request)
        switch try await self.reader().history(userID: userID, query: query) {
        case .held(let page):
            let answer = UserNotifications(userId: userID, page: page)
            return Self.json(
                InstanceNotifications(
                    userId: userID, held: true, partitions: [], partitionCount: 0,
                    notifications: answer.notifications, nextCursor: answer.nextCursor))
        case .notHeld(let partitions, let count):
            return Self.json(
                InstanceNotifications(
                    userId: userID, held: false, partitions: partitions.sorted(), partitionCount: count,
                    notifications: [], nextCursor: nil))
        }
    }

    /// This instance's own answer about one notification, for its peers' ``getNotification(_:)``.
    func getInstanceNotification(_ context: BasicRequestContext) async throws -> Response {
        let userID = try Self.pathParameter("userId", context)
        let id = try Self.pathParameter("notificationId", context)
        switch try await self.reader().notification(userID: userID, id: id) {
        case .held(let lookup):
            var record: NotificationRecord?
            var forgotten = false
            switch lookup {
            case .found(let item): record = NotificationRecord(item)
            case .notRemembered(let wasForgotten): forgotten = wasForgotten
            }
            return Self.json(
                InstanceNotification(
                    userId: userID, held: true, partitions: [], partitionCount: 0, notification: record,
                    forgotten: forgotten))
        case .notHeld(let partitions, let count):
            return Self.json(
                InstanceNotification(
                    userId: userID, held: false, partitions: partitions.sorted(), partitionCount: count,
                    notification: nil, forgotten: false))
        }
    }

    /// `404`: the state does not remember the notification. `forgotten`: it let some of the user's
    /// notifications go, so it cannot tell whether this was one of them.
    private static func notRemembered(_ id: String, forgotten: Bool) -> AdminError {
        forgotten
            ? AdminError(
                .notFound, "notification-not-remembered",
                "\(id) is not among the user's remembered notifications (the dedupe window and older unread ones): it left them, or was never sent; older notifications were let go, so the state cannot tell which"
            )
            : AdminError(
                .notFound, "notification-unknown",
                "no notification \(id) was given for this user: the state remembers every one it was given")
    }

    /// Most notifications a page lists (the dedupe window's default).
    static let maxHistoryLimit = 1000

    /// `limit` (1…1000, default 50), `cursor`, `appId`, `decision` (`delivered` or `silenced`).
    private static func historyQuery(_ request: Request) throws -> HistoryQuery {
        let parameters = request.uri.queryParameters
        var query = HistoryQuery(limit: 50)
        if let text = parameters["limit"] {
            guard let limit = Int(text), (1...Self.maxHistoryLimit).contains(limit) else {
                throw AdminError(
                    .badRequest, "invalid-value", "limit must be a whole number from 1 to \(Self.maxHistoryLimit)",
                    field: "limit")
            }
            query.limit = limit
        }
        if let text = parameters["cursor"] {
            guard let cursor = UInt32(text) else {
                throw AdminError(
                    .badRequest, "invalid-value", "cursor must be a previous page's nextCursor", field: "cursor")
            }
            query.before = cursor
        }
        if let text = parameters["appId"] { query.appID = String(text) }
        if let text = parameters["decision"] {
            guard let outcome = Decision.Outcome(rawValue: String(text)) else {
                throw AdminError(
                    .badRequest, "invalid-value", "decision must be delivered or silenced", field: "decision")
            }
            query.outcome = outcome
        }
        return query
    }

    /// The request's query (`?…`), passed on to a peer as it came; empty without one.
    private static func queryString(_ request: Request) -> String {
        request.uri.query.map { "?\($0)" } ?? ""
    }
}
