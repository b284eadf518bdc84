// MARK: - Foci and schedules in the context document

extension FocusContext {
    /// Most schedules a context may hold.
    public static let maxSchedules = 64
    /// Most Focus configurations a context may hold in ``foci``.
    public static let maxFoci = 32
    /// Most summary times a context may hold.
    public static let maxSummaryTimes = 24

    /// What a Focus allows, as the top-level fields say it for the manually set ``focus``: a
    /// configuration in ``foci``, which ``schedules`` refer to by name.
    public struct FocusConfiguration: Sendable, Hashable, Codable {
        /// Time-sensitive notifications break through. Default: `true`.
        public var allowTimeSensitive: Bool
        /// Badges count nothing during this Focus. Default: `false`.
        public var hideBadges: Bool
        /// What the Focus does to apps it does not list. Default: `.deliver`.
        public var otherApps: OtherApps
        /// Per app (bundle id): its filter.
        public var apps: [String: AppFilter]
        /// The people the Focus allows or silences.
        public var people: People?
        /// Caps on delivered notifications; `nil`: the configured default.
        public var rateLimits: RateLimits?
        /// Whether `focus.status` tells senders the user is focused while this Focus is on. Default: `true`.
        public var sharesStatus: Bool

        /// Creates a configuration.
        public init(
            allowTimeSensitive: Bool = true, hideBadges: Bool = false, otherApps: OtherApps = .deliver,
            apps: [String: AppFilter] = [:], people: People? = nil, rateLimits: RateLimits? = nil,
            sharesStatus: Bool = true
        ) {
            self.allowTimeSensitive = allowTimeSensitive
            self.hideBadges = hideBadges
            self.otherApps = otherApps
            self.apps = apps
            self.people = people
            self.rateLimits = rateLimits
            self.sharesStatus = sharesStatus
        }

        private enum CodingKeys: String, CodingKey {
            case allowTimeSensitive, hideBadges, otherApps, apps, people, rateLimits, sharesStatus
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.allowTimeSensitive = try container.decodeIfPresent(Bool.self, forKey: .allowTimeSensitive) ?? true
            self.hideBadges = try container.decodeIfPresent(Bool.self, forKey: .hideBadges) ?? false
            self.otherApps = try container.decodeIfPresent(OtherApps.self, forKey: .otherApps) ?? .deliver
            self.apps = try container.decodeIfPresent([String: AppFilter].self, forKey: .apps) ?? [:]
            self.people = try container.decodeIfPresent(People.self, forKey: .people)
            self.rateLimits = try container.decodeIfPresent(RateLimits.self, forKey: .rateLimits)
            self.sharesStatus = try container.decodeIfPresent(Bool.self, forKey: .sharesStatus) ?? true
        }
    }

    /// A Focus that turns itself on at `start` and off at `end`, local wall-clock time in the
    /// context's ``timeZone``, on the given days. A window whose end is before its start runs
    /// past midnight and belongs to the day it starts on.
    public struct Schedule: Sendable, Hashable, Codable {
        /// The Focus it turns on: a name in ``foci``.
        public var focus: String
        /// The days a window starts on.
        public var days: [Weekday]
        /// Local time the Focus turns on.
        public var start: LocalTime
        /// Local time the Focus turns off (the next day when it is before ``start``).
        public var end: LocalTime

        /// Creates a schedule.
        public init(focus: String, days: [Weekday], start: LocalTime, end: LocalTime) {
            self.focus = focus
            self.days = days
            self.start = start
            self.end = end
        }
    }

    /// A day of the week, as schedules name it.
    public enum Weekday: String, Sendable, Hashable, Codable, CaseIterable {
        case mon, tue, wed, thu, fri, sat, sun

        /// `0` Monday … `6` Sunday, as ``ZoneClock/weekday(ofDay:)`` counts.
        public var number: Int { Self.allCases.firstIndex(of: self)! }
    }

    /// A local wall-clock time of day, `HH:MM` (24-hour).
    public struct LocalTime: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
        /// Minutes since local midnight, `0` to `1439`.
        public let minuteOfDay: Int

        /// Parses `HH:MM`, `00:00` to `23:59`.
        public init?(_ text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
                let hour = Int(parts[0]), let minute = Int(parts[1]), (0..<24).contains(hour),
                (0..<60).contains(minute)
            else { return nil }
            self.minuteOfDay = hour * 60 + minute
        }

        public var description: String {
            let hour = self.minuteOfDay / 60
            let minute = self.minuteOfDay % 60
            return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
        }

        public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool { lhs.minuteOfDay < rhs.minuteOfDay }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            guard let time = LocalTime(try container.decode(String.self)) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected a local time HH:MM, 00:00 to 23:59")
            }
            self = time
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(self.description)
        }
    }

    /// The configuration of Focus `name`: its entry in ``foci``, else the top-level fields (the
    /// manually set Focus's, as before foci existed).
    public func configuration(of name: String) -> FocusConfiguration {
        self.foci[name]
            ?? FocusConfiguration(
                allowTimeSensitive: self.allowTimeSensitive, hideBadges: self.hideBadges, otherApps: self.otherApps,
                apps: self.apps, people: self.people, rateLimits: self.rateLimits, sharesStatus: self.sharesStatus)
    }

    /// Checks ``timeZone``, ``foci``, ``schedules`` and ``focusSetAt`` (called by ``validate()``).
    func validateSchedules() throws(FocusContextError) {
        if let timeZone = self.timeZone, ZoneClock(identifier: timeZone) == nil {
            throw FocusContextError(
                code: "invalid-value", field: "timeZone", message: "'\(timeZone)' is not an IANA time zone")
        }
        guard self.foci.count <= Self.maxFoci else {
            throw FocusContextError(
                code: "invalid-value", field: "foci", message: "more than \(Self.maxFoci) Focus configurations")
        }
        for (name, configuration) in self.foci.sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty else {
                throw FocusContextError(code: "invalid-value", field: "foci", message: "a Focus name must not be empty")
            }
            guard name.utf8.count <= Self.maxIdentifierBytes else {
                throw FocusContextError(
                    code: "invalid-value", field: "foci",
                    message: "a Focus name is longer than \(Self.maxIdentifierBytes) bytes")
            }
            do {
                try Self.checkConfiguration(configuration)
            } catch {
                var error = error
                error.field = "foci.\(name)" + (error.field.map { ".\($0)" } ?? "")
                throw error
            }
        }
        guard self.schedules.count <= Self.maxSchedules else {
            throw FocusContextError(
                code: "invalid-value", field: "schedules", message: "more than \(Self.maxSchedules) schedules")
        }
        for (index, schedule) in self.schedules.enumerated() {
            let field = "schedules[\(index)]"
            guard self.foci[schedule.focus] != nil else {
                throw FocusContextError(
                    code: "invalid-value", field: "\(field).focus",
                    message: "'\(schedule.focus)' is not a Focus configured in foci")
            }
            guard !schedule.days.isEmpty else {
                throw FocusContextError(code: "invalid-value", field: "\(field).days", message: "no day given")
            }
            guard schedule.start != schedule.end else {
                throw FocusContextError(
                    code: "invalid-value", field: "\(field).end", message: "a window must not start and end at once")
            }
        }
        let times = self.summaries?.times ?? []
        guard times.count <= Self.maxSummaryTimes else {
            throw FocusContextError(
                code: "invalid-value", field: "summaries.times",
                message: "more than \(Self.maxSummaryTimes) summary times")
        }
        for (index, time) in times.enumerated() where times[..<index].contains(time) {
            throw FocusContextError(
                code: "invalid-value", field: "summaries.times[\(index)]", message: "\(time) is given twice")
        }
        if !times.isEmpty && self.timeZone == nil {
            throw FocusContextError(
                code: "missing-field", field: "timeZone", message: "summary times need the user's IANA time zone")
        }
        if !self.schedules.isEmpty {
            guard self.timeZone != nil else {
                throw FocusContextError(
                    code: "missing-field", field: "timeZone", message: "schedules need the user's IANA time zone")
            }
            guard self.focus == nil || self.focusSetAt != nil else {
                throw FocusContextError(
                    code: "missing-field", field: "focusSetAt",
                    message: "a manually set focus beside schedules needs the instant it was set")
            }
        }
    }
}
