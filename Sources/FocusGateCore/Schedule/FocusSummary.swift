// MARK: - Summaries of what a Focus silenced

/// A summary of the notifications a user's Focus silenced and the user has not read yet,
/// published on `notifications.summaries` (key: the user id) when the Focus period ends and at the
/// user's summary times (docs/focus-schedules.md, Summaries).
public struct FocusSummary: Sendable, Hashable {
    /// Derived from the user, the trigger, the Focus and the period's end: a summary emitted again
    /// (a replay after a crash) carries the same id.
    public var summaryID: String
    public var userID: String
    public var trigger: Trigger
    /// The Focus that silenced the notifications; `nil`: none was on (a rate limit silenced them).
    public var focus: String?
    /// When the earliest notification of the summary was decided (Unix ms).
    public var periodStartMilliseconds: Int64
    /// The end of the Focus period, or the summary time (Unix ms).
    public var periodEndMilliseconds: Int64
    /// The user's context version when the summary was made.
    public var contextVersion: Int64?
    /// Silenced notifications still unread, all apps.
    public var total: Int
    /// By app id.
    public var apps: [App]

    /// Why a summary was made.
    public struct Trigger: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        /// The Focus that silenced the notifications is no longer on: turned off, expired, ended
        /// by its schedule, or replaced by another Focus.
        public static let focusEnded = Trigger(rawValue: "focus-ended")
        /// One of the user's summary times came.
        public static let summaryTime = Trigger(rawValue: "summary-time")

        public var description: String { self.rawValue }
    }

    /// One app's share of a summary.
    public struct App: Sendable, Hashable {
        public var appID: String
        public var total: Int
        /// Notifications per thread (`threadId` or `aps["thread-id"]`), most first, then by id;
        /// notifications without a thread count in ``total`` only.
        public var threads: [ThreadTotal]
        /// The most relevant notifications (`relevanceScore`, highest first; then oldest first),
        /// at most `summaries.maxItemsPerApp`.
        public var top: [Item]
    }

    /// How many of an app's summarised notifications belong to one thread.
    public struct ThreadTotal: Sendable, Hashable {
        public var threadID: String
        public var total: Int
    }

    /// A notification a summary names.
    public struct Item: Sendable, Hashable {
        public var id: String
        /// Rounded to two decimals; `nil`: the notification had none.
        public var relevanceScore: Double?
        /// The input record's offset in the partition (`-1`: not known).
        public var sourceOffset: Int64
        public var decidedAtMilliseconds: Int64
    }

    /// The summary id of a summary: 16 hex digits of a 64-bit FNV-1a hash of the user, the
    /// trigger, the Focus and what ended the period: `end`, the instant of a timer (Unix ms), or
    /// `v` and the version of the context whose change ended it (its `periodEnd`, the moment the
    /// change was applied, differs when an abort makes the summary again; the version does not).
    static func summaryID(userID: String, trigger: Trigger, focus: String?, end: String) -> String {
        let text = "\(userID)\u{0}\(trigger.rawValue)\u{0}\(focus ?? "")\u{0}\(end)"
        let hash = StableHash.fnv1a(text, basis: 0xcbf2_9ce4_8422_2325)
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The record's value: `{"summaryId","userId","trigger","focus","periodStart","periodEnd",
    /// "contextVersion","total","apps":[{"appId","total","threads":[{"threadId","total"}],
    /// "top":[{"id","relevanceScore","source","decidedAt"}]}],"createdAt"}`.
    ///
    /// - Parameters:
    ///   - sourcePrefix: `<notifications topic>/<partition>/`, which each item's offset completes
    ///     into its `focusgate-source`.
    ///   - createdAtMilliseconds: When the summary is published.
    public func writeJSON(into bytes: inout [UInt8], sourcePrefix: String, createdAtMilliseconds: Int64) {
        JSONWriter.writeObject(into: &bytes) { json in
            json.member("summaryId", string: self.summaryID)
            json.member("userId", string: self.userID)
            json.member("trigger", string: self.trigger.rawValue)
            json.member("focus", string: self.focus)
            json.member("periodStart", timestampMilliseconds: self.periodStartMilliseconds)
            json.member("periodEnd", timestampMilliseconds: self.periodEndMilliseconds)
            json.member("contextVersion", integer: self.contextVersion)
            json.member("total", integer: Int64(self.total))
            json.member("apps") { (json: inout JSONWriter) in
                for app in self.apps {
                    json.element { json in
                        json.member("appId", string: app.appID)
                        json.member("total", integer: Int64(app.total))
                        json.member("threads") { (json: inout JSONWriter) in
                            for thread in app.threads {
                                json.element { json in
                                    json.member("threadId", string: thread.threadID)
                                    json.member("total", integer: Int64(thread.total))
                                }
                            }
                        }
                        json.member("top") { (json: inout JSONWriter) in
                            for item in app.top {
                                json.element { json in
                                    json.member("id", string: item.id)
                                    if let score = item.relevanceScore {
                                        json.member("relevanceScore", number: score, decimals: 2)
                                    } else {
                                        json.member("relevanceScore", string: nil)
                                    }
                                    json.member(
                                        "source",
                                        string: item.sourceOffset < 0 ? nil : "\(sourcePrefix)\(item.sourceOffset)")
                                    json.member("decidedAt", timestampMilliseconds: item.decidedAtMilliseconds)
                                }
                            }
                        }
                    }
                }
            }
            json.member("createdAt", timestampMilliseconds: createdAtMilliseconds)
        }
    }
}
