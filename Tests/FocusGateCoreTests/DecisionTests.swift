import FocusGateCore
import FocusGateHarness
import Foundation
import Testing

@Suite("Decisions")
struct DecisionTests {
    static let now: Int64 = 1_795_000_000_000

    static func context(
        focus: String? = "Work",
        expiresAt: Int64? = nil,
        allowTimeSensitive: Bool = true,
        hideBadges: Bool = false,
        otherApps: FocusContext.OtherApps = .deliver,
        apps: [String: FocusContext.AppFilter] = ["chat": .init(filterPredicate: "SELF IN {'work'}")]
    ) -> CompiledFocusContext {
        FocusContext.fixture(
            version: 7, focus: focus, expiresAt: expiresAt.map(Date.init(unixMilliseconds:)),
            allowTimeSensitive: allowTimeSensitive, hideBadges: hideBadges, otherApps: otherApps, apps: apps
        ).compiledForTests()
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var lookup: ContextLookup
        var app = "chat"
        var criteria: String? = "work"
        var level = InterruptionLevel.active
        var outcome: Decision.Outcome
        var reason: Decision.Reason
        var testDescription: String { self.name }
    }

    static let cases: [Case] = [
        Case(name: "no context", lookup: .available(nil), outcome: .delivered, reason: .noFocus),
        Case(
            name: "focus off (null)", lookup: .available(context(focus: nil)), criteria: "home", outcome: .delivered,
            reason: .noFocus),
        Case(
            name: "expired one millisecond ago", lookup: .available(context(expiresAt: now - 1)), criteria: "home",
            outcome: .delivered, reason: .noFocus),
        Case(
            name: "expires at this very millisecond: still on", lookup: .available(context(expiresAt: now)),
            criteria: "home", outcome: .silenced, reason: .predicateMismatch),
        Case(
            name: "expires later", lookup: .available(context(expiresAt: now + 1)), criteria: "home",
            outcome: .silenced, reason: .predicateMismatch),
        Case(name: "predicate matches", lookup: .available(context()), outcome: .delivered, reason: .predicateMatch),
        Case(
            name: "predicate does not match", lookup: .available(context()), criteria: "home", outcome: .silenced,
            reason: .predicateMismatch),
        Case(
            name: "empty criteria is evaluated", lookup: .available(context()), criteria: "", outcome: .silenced,
            reason: .predicateMismatch),
        Case(
            name: "missing criteria", lookup: .available(context()), criteria: nil, outcome: .delivered,
            reason: .noCriteria),
        Case(
            name: "app without predicate", lookup: .available(context(apps: ["chat": .init()])), criteria: "home",
            outcome: .delivered, reason: .noFilter),
        Case(
            name: "unlisted app, other apps delivered", lookup: .available(context()), app: "mail", criteria: "home",
            outcome: .delivered, reason: .noFilter),
        Case(
            name: "unlisted app, other apps silenced", lookup: .available(context(otherApps: .silence)), app: "mail",
            outcome: .silenced, reason: .appSilenced),
        Case(
            name: "unlisted app silenced even without criteria", lookup: .available(context(otherApps: .silence)),
            app: "mail", criteria: nil, outcome: .silenced, reason: .appSilenced),
        Case(
            name: "listed app silenced",
            lookup: .available(context(apps: ["chat": .init(filterPredicate: "TRUEPREDICATE", silenced: true)])),
            outcome: .silenced, reason: .appSilenced),
        Case(
            name: "listed app delivered while others are silenced", lookup: .available(context(otherApps: .silence)),
            outcome: .delivered, reason: .predicateMatch),
        Case(
            name: "predicate error", lookup: .available(context(apps: ["chat": .init(filterPredicate: "SELF < 5")])),
            outcome: .delivered, reason: .predicateError),
        Case(
            name: "critical breaks through a mismatch", lookup: .available(context()), criteria: "home",
            level: .critical, outcome: .delivered, reason: .breakthroughCritical),
        Case(
            name: "critical breaks through a silenced app", lookup: .available(context(otherApps: .silence)),
            app: "mail", level: .critical, outcome: .delivered, reason: .breakthroughCritical),
        Case(
            name: "critical breaks through without time-sensitive allowed",
            lookup: .available(context(allowTimeSensitive: false)), criteria: "home", level: .critical,
            outcome: .delivered, reason: .breakthroughCritical),
        Case(
            name: "time-sensitive breaks through when allowed", lookup: .available(context()), criteria: "home",
            level: .timeSensitive, outcome: .delivered, reason: .breakthroughTimeSensitive),
        Case(
            name: "time-sensitive stays silenced when not allowed",
            lookup: .available(context(allowTimeSensitive: false)), criteria: "home", level: .timeSensitive,
            outcome: .silenced, reason: .predicateMismatch),
        Case(
            name: "passive stays silenced", lookup: .available(context()), criteria: "home", level: .passive,
            outcome: .silenced, reason: .predicateMismatch),
        Case(
            name: "delivered critical keeps its own reason", lookup: .available(context()), level: .critical,
            outcome: .delivered, reason: .predicateMatch),
        Case(
            name: "store down, nothing cached", lookup: .unavailable, outcome: .delivered, reason: .contextUnavailable),
    ]

    @Test("every rule", arguments: cases)
    func rule(_ testCase: Case) {
        let decision = FocusDecider.decide(
            appID: testCase.app, criteria: testCase.criteria, interruptionLevel: testCase.level,
            lookup: testCase.lookup, nowMilliseconds: Self.now
        )
        #expect(decision.outcome == testCase.outcome)
        #expect(decision.reason == testCase.reason)
    }

    @Test("focus and context version are reported with the decision")
    func reportsContext() {
        let on = FocusDecider.decide(
            appID: "chat", criteria: "work", interruptionLevel: .active, lookup: .available(Self.context()),
            nowMilliseconds: Self.now)
        #expect(on.focus == "Work" && on.contextVersion == 7)
        let off = FocusDecider.decide(
            appID: "chat", criteria: "work", interruptionLevel: .active, lookup: .available(Self.context(focus: nil)),
            nowMilliseconds: Self.now)
        #expect(off.focus == nil && off.contextVersion == 7)
    }

    @Test("badge counting: no focus counts all, hideBadges none, otherwise what the filter delivers")
    func badgeCounting() {
        #expect(FocusDecider.countsInBadge(appID: "chat", criteria: "home", context: nil, nowMilliseconds: Self.now))
        #expect(
            FocusDecider.countsInBadge(
                appID: "chat", criteria: "home", context: Self.context(expiresAt: Self.now - 1),
                nowMilliseconds: Self.now))
        #expect(
            !FocusDecider.countsInBadge(
                appID: "chat", criteria: "work", context: Self.context(hideBadges: true), nowMilliseconds: Self.now))
        #expect(
            FocusDecider.countsInBadge(
                appID: "chat", criteria: "work", context: Self.context(), nowMilliseconds: Self.now))
        #expect(
            !FocusDecider.countsInBadge(
                appID: "chat", criteria: "home", context: Self.context(), nowMilliseconds: Self.now))
        #expect(
            FocusDecider.countsInBadge(appID: "chat", criteria: nil, context: Self.context(), nowMilliseconds: Self.now)
        )
        #expect(
            !FocusDecider.countsInBadge(
                appID: "mail", criteria: nil, context: Self.context(otherApps: .silence), nowMilliseconds: Self.now))
    }
}

@Suite("Focus contexts")
struct FocusContextTests {
    static let specExample = #"""
        {"userId":"u-42","version":17,"focus":"Work","expiresAt":"2026-11-21T18:00:00Z","allowTimeSensitive":true,"hideBadges":false,"otherApps":"deliver",
         "apps":{"com.example.chat":{"filterPredicate":"SELF IN {'work-account-identifier'}","silenced":false,
           "parameters":{"alwaysUseDarkMode":false,"status":"Working","account":"work-account-identifier"}}}}
        """#

    @Test("the contract's example decodes, round-trips and keeps parameters opaque")
    func specExampleRoundTrip() throws {
        let context = try FocusContext.decode(from: Data(Self.specExample.utf8))
        #expect(context.userID == "u-42" && context.version == 17 && context.focus == "Work")
        #expect(context.expiresAt == Date(timeIntervalSince1970: 1_795_284_000))
        #expect(
            context.apps["com.example.chat"]?.parameters
                == .object([
                    "alwaysUseDarkMode": .bool(false), "status": .string("Working"),
                    "account": .string("work-account-identifier"),
                ]))
        #expect(try FocusContext.decode(from: context.encoded()) == context)
    }

    @Test("defaults: allowTimeSensitive true, hideBadges false, otherApps deliver, no apps")
    func defaults() throws {
        let context = try FocusContext.decode(from: Data(#"{"userId":"u","version":1,"focus":"Sleep"}"#.utf8))
        #expect(
            context.allowTimeSensitive && !context.hideBadges && context.otherApps == .deliver && context.apps.isEmpty)
        #expect(context.expiresAt == nil)
    }

    @Test(
        "refusals name the field",
        arguments: [
            (#"{"version":1}"#, "missing-field", "userId"),
            (#"{"userId":"u"}"#, "missing-field", "version"),
            (#"{"userId":"u","version":"1"}"#, "wrong-type", "version"),
            (#"{"userId":"","version":1}"#, "invalid-value", "userId"),
            (#"{"userId":"u","version":-1}"#, "invalid-value", "version"),
            (#"{"userId":"u","version":1,"focus":""}"#, "invalid-value", "focus"),
            (#"{"userId":"u","version":1,"expiresAt":"tomorrow"}"#, "invalid-value", "expiresAt"),
            (#"{"userId":"u","version":1,"otherApps":"mute"}"#, "invalid-value", "otherApps"),
            (#"{"userId":"u","version":1,"apps":{"a":{"silenced":"yes"}}}"#, "wrong-type", "apps.a.silenced"),
            (
                #"{"userId":"u","version":1,"apps":{"a":{"filterPredicate":"SELF MATCHES 'x'"}}}"#, "invalid-predicate",
                "apps.a.filterPredicate"
            ),
            (#"{"userId":"u","version":1"#, "invalid-json", nil),
            (#"{"userId":"u","version":1,"people":{"allowed":"mom"}}"#, "wrong-type", "people.allowed"),
            (#"{"userId":"u","version":1,"people":{"silenced":[""]}}"#, "invalid-value", "people.silenced"),
            (#"{"userId":"u","version":1,"people":{"allowed":["a","b"],"silenced":["b"]}}"#, "invalid-value", "people"),
        ] as [(String, String, String?)])
    func refusals(json: String, code: String, field: String?) {
        let error = #expect(throws: FocusContextError.self) { try FocusContext.decode(from: Data(json.utf8)) }
        #expect(error?.code == code)
        #expect(error?.field == field)
    }

    @Test("people: at most 10,000 a list; round-trips; a document without people encodes as before")
    func people() throws {
        let withPeople = #"{"userId":"u","version":1,"focus":"Work","people":{"allowed":["mom"],"silenced":["spam"]}}"#
        let context = try FocusContext.decode(from: Data(withPeople.utf8))
        #expect(context.people == FocusContext.People(allowed: ["mom"], silenced: ["spam"]))
        #expect(try FocusContext.decode(from: context.encoded()) == context)
        let plain = try FocusContext.decode(from: Data(#"{"userId":"u","version":1}"#.utf8))
        #expect(!String(decoding: plain.encoded(), as: UTF8.self).contains("people"))
        var tooMany = plain
        tooMany.people = .init(allowed: (0...FocusContext.maxPeoplePerList).map { "p\($0)" })
        let error = #expect(throws: FocusContextError.self) { try tooMany.validate() }
        #expect(error?.field == "people.allowed" && error?.code == "invalid-value")
    }

    @Test("a refused predicate carries the parser's position and reason")
    func predicateErrorDetail() {
        let error = #expect(throws: FocusContextError.self) {
            try FocusContext.decode(
                from: Data(#"{"userId":"u","version":1,"apps":{"a":{"filterPredicate":"SELF.length > 3"}}}"#.utf8))
        }
        #expect(error?.predicateError?.code == .keyPath)
        #expect(error?.predicateError?.position == 4)
    }

    @Test("AND/OR mixes are reported as warnings by field")
    func warnings() {
        let context = FocusContext(
            userID: "u", version: 1, apps: ["a": .init(filterPredicate: "SELF == 'x' OR SELF == 'y' AND SELF == 'z'")])
        #expect(context.predicateWarnings.map(\.field) == ["apps.a.filterPredicate"])
    }

    @Test("compiling shares predicates and app ids between users")
    func interning() throws {
        var compiler = FocusContextCompiler()
        for index in 0..<100 {
            _ = try compiler.compile(
                FocusContext(
                    userID: "u\(index)", version: 1, focus: "Work",
                    apps: ["com.example.chat": .init(filterPredicate: "SELF IN {'work'}")]))
        }
        #expect(compiler.distinctPredicates == 1)
    }
}

extension FocusDecider {
    /// The one decision path for an event of these fields, as the tables here are written.
    static func decide(
        appID: String, criteria: String?, interruptionLevel: InterruptionLevel, senderID: String? = nil,
        repeatedSender: Bool = false, lookup: ContextLookup, nowMilliseconds: Int64
    ) -> Decision {
        self.decide(
            NotificationEvent(
                id: "n", userID: "u", appID: appID, filterCriteria: criteria, interruptionLevel: interruptionLevel,
                senderID: senderID),
            lookup: lookup, nowMilliseconds: nowMilliseconds, repeatedSender: { repeatedSender }
        ).decision
    }
}
