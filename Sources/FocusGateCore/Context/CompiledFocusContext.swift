/// The form of a ``FocusContext`` that decisions read: predicates compiled, expiry in
/// milliseconds, apps in a small array. Kept per cached user, so it is small; predicates and app
/// ids are shared between users through ``FocusContextCompiler``.
public final class CompiledFocusContext: Sendable {
    /// The context's version.
    public let version: Int64
    /// The Focus that is on, or `nil`.
    public let focus: String?
    /// Unix milliseconds after which the context counts as Focus off; `Int64.max` without expiry.
    public let expiresAtMilliseconds: Int64
    /// Time-sensitive notifications break through.
    public let allowTimeSensitive: Bool
    /// Badges count nothing.
    public let hideBadges: Bool
    /// Apps the context does not list are silenced.
    public let silencesOtherApps: Bool
    /// `focus.status` says the user is focused while this Focus is on.
    public let sharesStatus: Bool
    let apps: ContiguousArray<App>
    /// The people lists, hashed once per context; `nil` when the Focus names nobody.
    let people: People?
    /// The context's rate limits; `nil`: the configured default applies.
    public let rateLimits: RateLimitPolicy?
    /// The Foci its schedules turn on, and when; `nil` without schedules (the fields above are
    /// then the whole story).
    let scheduled: ScheduledFoci?
    /// Which of its context's Focus configurations this is (`0`: the context's own fields), so
    /// that a badge counted under one Focus is recounted under another of the same version.
    let focusOrdinal: UInt8
    /// Whether and when what the user's Foci silence is summed up; `nil`: never (nothing is kept
    /// for summaries).
    let summaries: SummaryPolicy?

    // A class of constants: the record loop passes a context around by one reference (a struct
    // of this many fields was copied, with a retain per field, at each hand-over).
    init(
        version: Int64, focus: String?, expiresAtMilliseconds: Int64, allowTimeSensitive: Bool, hideBadges: Bool,
        silencesOtherApps: Bool, sharesStatus: Bool, apps: ContiguousArray<App>, people: People?,
        rateLimits: RateLimitPolicy?, scheduled: ScheduledFoci?, focusOrdinal: UInt8, summaries: SummaryPolicy? = nil
    ) {
        self.version = version
        self.focus = focus
        self.expiresAtMilliseconds = expiresAtMilliseconds
        self.allowTimeSensitive = allowTimeSensitive
        self.hideBadges = hideBadges
        self.silencesOtherApps = silencesOtherApps
        self.sharesStatus = sharesStatus
        self.apps = apps
        self.people = people
        self.rateLimits = rateLimits
        self.scheduled = scheduled
        self.focusOrdinal = focusOrdinal
        self.summaries = summaries
    }

    /// The people lists as one hash table by the sender id's 64-bit hash (which the record loop
    /// computes once for the state anyway): one lookup of an integer key, whether the lists name
    /// 5 or 5,000 people, and the id's text compared only when the hash is listed.
    struct People: Sendable {
        let byHash: [UInt64: Person]
        /// Ids whose hash another listed id has too (in practice none).
        let colliding: [String: PersonList]
        let allowRepeated: Bool

        struct Person: Sendable {
            let senderID: String
            let list: PersonList
        }

        init(allowed: [String], silenced: [String], allowRepeated: Bool) {
            var byHash: [UInt64: Person] = [:]
            var colliding: [String: PersonList] = [:]
            for (senderID, list) in allowed.map({ ($0, PersonList.allowed) }) + silenced.map({ ($0, .silenced) }) {
                let hash = StableHash.sender(senderID)
                if let listed = byHash[hash], listed.senderID != senderID {
                    colliding[senderID] = list
                } else {
                    byHash[hash] = Person(senderID: senderID, list: list)  // silenced wins a repeat
                }
            }
            self.byHash = byHash
            self.colliding = colliding
            self.allowRepeated = allowRepeated
        }

        func list(of senderID: String, hash: UInt64) -> PersonList? {
            if let person = self.byHash[hash], person.senderID == senderID { return person.list }
            return self.colliding.isEmpty ? nil : self.colliding[senderID]
        }
    }

    /// Whether a repeated sender gets through (`people.allowRepeated`).
    public var allowsRepeatedSenders: Bool { self.people?.allowRepeated ?? false }

    struct App: Sendable {
        let appID: String
        let predicate: FilterPredicate?
        let silenced: Bool
    }

    /// Whether a Focus is on at `nowMilliseconds`: a Focus is set and the context has not expired
    /// (it expires *after* `expiresAt`: at that very millisecond it still applies). For a
    /// context with schedules, ask ``inForce(atMilliseconds:)`` first.
    public func isFocusOn(atMilliseconds nowMilliseconds: Int64) -> Bool {
        self.focus != nil && nowMilliseconds <= self.expiresAtMilliseconds
    }

    /// The Focus on at `nowMilliseconds` (``isFocusOn(atMilliseconds:)``), or `nil`. For a
    /// context with schedules, ask ``inForce(atMilliseconds:)`` first.
    public func focusOn(atMilliseconds nowMilliseconds: Int64) -> String? {
        self.isFocusOn(atMilliseconds: nowMilliseconds) ? self.focus : nil
    }

    /// Whether schedules take part: decisions then read ``inForce(atMilliseconds:)``.
    public var hasSchedules: Bool { self.scheduled != nil }

    /// The context as it stands at `instant`: the configuration of the Focus on then (a
    /// context with no Focus when none is), without expiry or schedules. `self` without schedules.
    public func inForce(atMilliseconds instant: Int64) -> CompiledFocusContext {
        guard let scheduled = self.scheduled else { return self }
        return scheduled.configuration(at: instant)
    }

    /// The first instant after `instant` at which the Focus in force may change: the expiry, a
    /// schedule boundary or the end of a manual override; `nil`: never.
    public func nextTransition(after instant: Int64) -> Int64? {
        if let scheduled = self.scheduled { return scheduled.nextTransition(after: instant) }
        guard self.focus != nil, self.expiresAtMilliseconds != .max, instant <= self.expiresAtMilliseconds else {
            return nil
        }
        return self.expiresAtMilliseconds + 1
    }

    /// When the partition's timer for the user must fire next: at the next transition
    /// (``nextTransition(after:)``) or the next summary time, whichever comes first.
    public func nextTimer(after instant: Int64) -> Int64? {
        let transition = self.nextTransition(after: instant)
        guard let summary = self.summaries?.times?.next(after: instant) else { return transition }
        return min(transition ?? .max, summary)
    }

    /// Whether `instant` is one of the user's summary times.
    public func isSummaryTime(_ instant: Int64) -> Bool {
        self.summaries?.times?.contains(instant) ?? false
    }

    /// What `focus.status` says of the user at `instant`: focused while a Focus that shares its
    /// status is on, and until when, as far as the next transitions tell (up to 16 ahead).
    public func status(at instant: Int64) -> FocusStatus {
        func focused(_ context: CompiledFocusContext, _ at: Int64) -> Bool {
            context.sharesStatus && context.isFocusOn(atMilliseconds: at)
        }
        guard focused(self.inForce(atMilliseconds: instant), instant) else {
            return FocusStatus(focused: false, until: nil, contextVersion: self.version)
        }
        var at = instant
        for _ in 0..<16 {
            guard let next = self.nextTransition(after: at) else { break }
            if !focused(self.inForce(atMilliseconds: next), next) {
                return FocusStatus(focused: true, until: next, contextVersion: self.version)
            }
            at = next
        }
        return FocusStatus(focused: true, until: nil, contextVersion: self.version)
    }

    /// Which Focus is on at `instant`, why, since and until when.
    public func focusState(at instant: Int64) -> FocusState {
        self.scheduled?.timeline.state(at: instant)
            ?? FocusTimeline(focus: self.focus, expiresAt: self.expiresAtMilliseconds).state(at: instant)
    }

    /// The list of the Focus that names `senderID`, if any.
    public func personList(of senderID: String?) -> PersonList? {
        guard let senderID, let people = self.people else { return nil }
        return people.list(of: senderID, hash: StableHash.sender(senderID))
    }

    /// ``personList(of:)`` with the sender's hash already computed (``StableHash/sender(_:)``).
    func personList(of senderID: String, hash: UInt64) -> PersonList? {
        self.people?.list(of: senderID, hash: hash)
    }

    /// The filter the context sets for `appID`: whether it silences the app, and its predicate.
    func filter(for appID: String) -> (silenced: Bool, predicate: FilterPredicate?) {
        for app in self.apps where UserID.sameBytes(app.appID, appID) {
            return (app.silenced, app.predicate)
        }
        return (self.silencesOtherApps, nil)
    }
}

/// Compiles contexts, sharing compiled predicates, app ids and whole app lists between users:
/// with a million users most contexts use the same few filters.
///
/// Not `Sendable`: one owner (the context cache) uses it. The intern tables grow with the number
/// of distinct predicates and app lists, not with users.
public struct FocusContextCompiler {
    private var predicates: [String: FilterPredicate] = [:]
    private var appIDs: [String: String] = [:]
    private var focusNames: [String: String] = [:]
    /// Identical app lists share one copy-on-write buffer.
    private var appLists: [AppListKey: ContiguousArray<CompiledFocusContext.App>] = [:]

    private struct AppListKey: Hashable {
        var entries: [Entry]
        struct Entry: Hashable {
            var appID: String
            var predicate: String?
            var silenced: Bool
        }
    }

    /// Creates a compiler with empty intern tables.
    public init() {}

    /// Distinct predicate texts compiled so far.
    public var distinctPredicates: Int { self.predicates.count }

    /// Compiles `context` (which should have passed ``FocusContext/validate()``).
    ///
    /// - Throws: ``FocusContextError`` when a predicate does not compile.
    ///
    /// - Parameter horizonFrom: For a context with schedules, the instant (Unix ms, usually now)
    ///   from which the Focus in force is worked out ahead for two days, so that a decision
    ///   looks it up instead of computing it; `nil`: computed at each decision. Results are the
    ///   same either way.
    public mutating func compile(_ context: FocusContext, horizonFrom: Int64? = nil) throws(FocusContextError)
        -> CompiledFocusContext
    {
        let expiry = context.expiresAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.down)) } ?? Int64.max
        let manual = context.focus.map { context.configuration(of: $0) } ?? context.configuration(of: "")
        let summaries = context.summaries.map { SummaryPolicy($0, timeZone: context.timeZone) }
        var scheduled: ScheduledFoci?
        if !context.schedules.isEmpty {
            var configurations: [String: CompiledFocusContext] = [:]
            let names = Set(context.foci.keys).union(context.focus.map { [$0] } ?? []).sorted()
            for (index, name) in names.enumerated() {
                configurations[name] = try self.compile(
                    context.configuration(of: name), focus: name, version: context.version, expiry: .max,
                    scheduled: nil, fieldPrefix: context.foci[name] == nil ? "" : "foci.\(name).",
                    ordinal: UInt8(index + 1), summaries: summaries)
            }
            let off = try self.compile(
                FocusContext.FocusConfiguration(), focus: nil, version: context.version, expiry: .max, scheduled: nil,
                fieldPrefix: "", summaries: summaries)
            scheduled = ScheduledFoci(
                timeline: FocusTimeline(context), configurations: configurations, off: off, horizonFrom: horizonFrom)
        }
        return try self.compile(
            manual, focus: context.focus, version: context.version, expiry: expiry, scheduled: scheduled,
            fieldPrefix: context.focus.flatMap { context.foci[$0] == nil ? nil : "foci.\($0)." } ?? "",
            summaries: summaries)
    }

    private mutating func compile(
        _ configuration: FocusContext.FocusConfiguration, focus: String?, version: Int64, expiry: Int64,
        scheduled: ScheduledFoci?, fieldPrefix: String, ordinal: UInt8 = 0, summaries: SummaryPolicy? = nil
    ) throws(FocusContextError) -> CompiledFocusContext {
        let sorted = configuration.apps.sorted(by: { $0.key < $1.key })
        let key = AppListKey(
            entries: sorted.map {
                .init(appID: $0.key, predicate: $0.value.filterPredicate, silenced: $0.value.silenced)
            })
        var apps: ContiguousArray<CompiledFocusContext.App>
        if let shared = self.appLists[key] {
            apps = shared
        } else {
            apps = []
            apps.reserveCapacity(sorted.count)
            for (appID, filter) in sorted {
                var predicate: FilterPredicate?
                if let text = filter.filterPredicate {
                    predicate = try self.predicate(
                        text, field: fieldPrefix + "apps.\(appID).filterPredicate")
                }
                apps.append(
                    .init(appID: self.intern(appID, in: &self.appIDs), predicate: predicate, silenced: filter.silenced))
            }
            self.appLists[key] = apps
        }
        return CompiledFocusContext(
            version: version,
            focus: focus.map { self.intern($0, in: &self.focusNames) },
            expiresAtMilliseconds: expiry,
            allowTimeSensitive: configuration.allowTimeSensitive,
            hideBadges: configuration.hideBadges,
            silencesOtherApps: configuration.otherApps == .silence,
            sharesStatus: configuration.sharesStatus,
            apps: apps,
            people: configuration.people.flatMap { people in
                people.allowed.isEmpty && people.silenced.isEmpty && !people.allowRepeated
                    ? nil
                    : .init(allowed: people.allowed, silenced: people.silenced, allowRepeated: people.allowRepeated)
            },
            rateLimits: configuration.rateLimits.map(RateLimitPolicy.init),
            scheduled: scheduled,
            focusOrdinal: ordinal,
            summaries: summaries
        )
    }

    private mutating func predicate(_ text: String, field: String) throws(FocusContextError) -> FilterPredicate {
        if let existing = self.predicates[text] { return existing }
        do {
            let predicate = try FilterPredicate(text)
            self.predicates[text] = predicate
            return predicate
        } catch {
            throw FocusContextError(code: "invalid-predicate", field: field, message: "\(error)", predicateError: error)
        }
    }

    private func intern(_ value: String, in table: inout [String: String]) -> String {
        if let existing = table[value] { return existing }
        table[value] = value
        return value
    }
}
