public import FocusGateCore
public import Foundation

extension FocusContext {
    /// A context for tests: a Focus (`Work` unless said otherwise) in which the `chat` app delivers
    /// only what `predicate` accepts (`nil`: chat has no filter); `apps` replaces that app list.
    public static func fixture(
        _ userID: String = "u", version: Int64 = 1, focus: String? = "Work",
        predicate: String? = "SELF IN {'work'}", expiresAt: Date? = nil, allowTimeSensitive: Bool = true,
        hideBadges: Bool = false, otherApps: OtherApps = .deliver, apps: [String: AppFilter]? = nil,
        people: People? = nil, rateLimits: RateLimits? = nil
    ) -> FocusContext {
        FocusContext(
            userID: userID, version: version, focus: focus, expiresAt: expiresAt,
            allowTimeSensitive: allowTimeSensitive, hideBadges: hideBadges, otherApps: otherApps,
            apps: apps ?? ["chat": .init(filterPredicate: predicate)], people: people, rateLimits: rateLimits)
    }

    /// The compiled form the cache keeps; the fixture's predicates compile.
    public func compiledForTests() -> CompiledFocusContext {
        var compiler = FocusContextCompiler()
        return try! compiler.compile(self)
    }
}

extension Date {
    /// The instant `milliseconds` after the Unix epoch.
    public init(unixMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
