public import FocusGateCore

extension NotificationEvent {
    /// A notification for tests: user `u`'s, of the `chat` app, with no criteria unless given.
    public static func fixture(
        _ id: String, user: String = "u", app: String = "chat", criteria: String? = nil,
        level: InterruptionLevel = .active, score: Double? = nil, sender: String? = nil, thread: String? = nil
    ) -> NotificationEvent {
        NotificationEvent(
            id: id, userID: user, appID: app, filterCriteria: criteria, interruptionLevel: level,
            relevanceScore: score, senderID: sender, threadID: thread)
    }

    /// A `read` event for tests: marks `ids` of `user`'s `app` read.
    public static func readFixture(_ ids: [String], user: String = "u", app: String = "chat") -> NotificationEvent {
        NotificationEvent(kind: .read, id: "r", userID: user, appID: app, notificationIDs: ids)
    }
}
