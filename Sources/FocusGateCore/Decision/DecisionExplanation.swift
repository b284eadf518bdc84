/// A decision with what it was made from, as `focusgate explain` and `POST /v1/explain` report it.
public struct DecisionExplanation: Sendable, Hashable, Codable {
    /// `delivered` or `silenced`.
    public var decision: String
    /// The reason code.
    public var reason: String
    /// The Focus that was on, if any.
    public var focus: String?
    /// The context version used, if any.
    public var contextVersion: Int64?
    /// The people list of the Focus that names the event's sender (`allowed`, `silenced`), or
    /// `nil` when no Focus is on, the event names no sender or the Focus does not list it.
    public var senderList: PersonList?
    /// Whether the notification, while unread, counts in the app's badge under this context.
    public var badgeCounted: Bool
    /// How badge changes are published: coalesced to the latest value per (user, app) at each
    /// commit (`commit.intervalMs`).
    public var badgeUpdates = "coalesced-per-commit"

    /// Explains the decision for `event` under `context` at `nowMilliseconds`.
    ///
    /// - Throws: ``FocusContextError`` when the context's predicates do not compile.
    public init(event: NotificationEvent, context: FocusContext?, nowMilliseconds: Int64) throws(FocusContextError) {
        var compiler = FocusContextCompiler()
        let compiled = try context.map { (context) throws(FocusContextError) in try compiler.compile(context) }
        let decision = FocusDecider.decide(event, lookup: .available(compiled), nowMilliseconds: nowMilliseconds)
        self.decision = decision.outcome.rawValue
        self.reason = decision.reason.rawValue
        self.focus = decision.focus
        self.contextVersion = decision.contextVersion
        self.senderList =
            compiled?.isFocusOn(atMilliseconds: nowMilliseconds) == true
            ? compiled?.personList(of: event.senderID) : nil
        self.badgeCounted = FocusDecider.countsInBadge(
            appID: event.appID, criteria: event.filterCriteria, senderID: event.senderID, context: compiled,
            nowMilliseconds: nowMilliseconds
        )
    }

    private enum CodingKeys: String, CodingKey {
        case decision, reason, focus, contextVersion, senderList, badgeCounted, badgeUpdates
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.decision, forKey: .decision)
        try container.encode(self.reason, forKey: .reason)
        try container.encode(self.focus, forKey: .focus)
        try container.encode(self.contextVersion, forKey: .contextVersion)
        try container.encode(self.senderList, forKey: .senderList)
        try container.encode(self.badgeCounted, forKey: .badgeCounted)
        try container.encode(self.badgeUpdates, forKey: .badgeUpdates)
    }
}
