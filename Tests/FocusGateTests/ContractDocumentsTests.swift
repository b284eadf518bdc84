import FocusGate
import FocusGateCore
import FocusGateHarness
import Foundation
import Testing
import Yams

/// docs/schemas/*.json and docs/asyncapi.yaml say what the code reads and writes: their examples
/// go through the real decoders, what the code writes validates against them, and every topic,
/// reason and error code the code has is in them.
@Suite("Contract documents: JSON Schemas and AsyncAPI")
struct ContractDocumentsTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs")

    static func schema(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: Self.docs.appendingPathComponent("schemas/\(name).schema.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A summary as the state makes it: three notifications Sleep silenced, then Sleep off.
    static func summaryRecord(withScores: Bool) throws -> [UInt8] {
        var compiler = FocusContextCompiler()
        let sleep = try compiler.compile(
            FocusContext(userID: "u-5", version: 1, focus: "Sleep", otherApps: .silence, summaries: .init()))
        let off = try compiler.compile(FocusContext(userID: "u-5", version: 2, summaries: .init()))
        var state = PartitionState()
        for (index, thread) in ["family", nil, "family"].enumerated() {
            let event = NotificationEvent(
                id: "n-\(index)", userID: "u-5", appID: "chat", relevanceScore: withScores ? 0.3 * Double(index) : nil,
                threadID: thread)
            _ = state.apply(
                event, lookup: .available(sleep), nowMilliseconds: 1_795_284_000_000 + Int64(index),
                sourceOffset: withScores ? Int64(index) : -1
            )
        }
        _ = state.recompute(userID: "u-5", context: off, nowMilliseconds: 1_795_284_060_000)
        var bytes: [UInt8] = []
        try #require(state.pendingSummaries.count == 1)
        state.pendingSummaries[0].writeJSON(
            into: &bytes, sourcePrefix: "notifications/0/", createdAtMilliseconds: 1_795_284_060_100)
        return bytes
    }

    static func examples(_ name: String) throws -> [Data] {
        let examples = try #require(try Self.schema(name)["examples"] as? [Any])
        #expect(!examples.isEmpty)
        return try examples.map { try JSONSerialization.data(withJSONObject: $0) }
    }

    static func asyncAPI() throws -> [String: Any] {
        let text = try String(contentsOf: Self.docs.appendingPathComponent("asyncapi.yaml"), encoding: .utf8)
        return try #require(try Yams.load(yaml: text) as? [String: Any])
    }

    @Test("every schema example is accepted by the real decoder of its message")
    func examplesDecode() throws {
        for example in try Self.examples("notification-event") {
            #expect(throws: Never.self) { try EventDecoder().decode(Array(example)) }
        }
        for example in try Self.examples("focus-context") {
            #expect(throws: Never.self) { try FocusContext.decode(from: example) }
        }
        for example in try Self.examples("invalidation") {
            let userID = try #require((try JSONSerialization.jsonObject(with: example) as? [String: Any])?["userId"])
            #expect(throws: Never.self) {
                try ContextInvalidation.parse(key: Array("\(userID)".utf8), value: Array(example))
            }
        }
    }

    @Test("the schemas are valid JSON Schema 2020-12; their examples and what the code writes validate against them")
    func codeOutputValidates() async throws {
        let context = try FocusContext.decode(from: try #require(Self.examples("focus-context").first))
        let written: [(schema: String, value: [UInt8])] = [
            ("focus-context", Array(context.encoded())),
            ("invalidation", ContextInvalidation.inlineValue(for: context)),
            (
                "badge-update",
                BadgeUpdate(
                    userID: "u-42", appID: "com.example.chat", badge: 1, unread: 2, focus: "Work", contextVersion: 3,
                    sequence: 4, updatedAtMilliseconds: 1_795_284_000_123
                ).jsonBytes
            ),
            (
                "badge-update",
                BadgeUpdate(
                    userID: "u", appID: "a", badge: 0, unread: 0, focus: nil, contextVersion: nil, sequence: 1,
                    updatedAtMilliseconds: 0
                ).jsonBytes
            ),
            (
                "focus-status",
                {
                    var bytes: [UInt8] = []
                    FocusStatusUpdate(
                        userID: "u-11", status: FocusStatus(focused: true, until: 1_795_284_000_000, contextVersion: 5),
                        sequence: 1, updatedAtMilliseconds: 1_795_283_000_123
                    ).writeJSON(into: &bytes)
                    return bytes
                }()
            ),
            (
                "focus-status",
                {
                    var bytes: [UInt8] = []
                    FocusStatusUpdate(
                        userID: "u", status: FocusStatus(focused: false, until: nil, contextVersion: nil), sequence: 2,
                        updatedAtMilliseconds: 0
                    ).writeJSON(into: &bytes)
                    return bytes
                }()
            ),
            ("focus-summary", try Self.summaryRecord(withScores: true)),
            ("focus-summary", try Self.summaryRecord(withScores: false)),
        ]
        // Checked with Python's jsonschema (installed with schemathesis into .build/venv by `make test`).
        let script = """
            import json, sys, pathlib, jsonschema
            from referencing import Registry, Resource
            folder = pathlib.Path(sys.argv[1])
            schemas = {p.name: json.loads(p.read_text()) for p in folder.glob("*.schema.json")}
            registry = Registry().with_resources([(n, Resource.from_contents(s)) for n, s in schemas.items()])
            checker = jsonschema.FormatChecker()
            for name, schema in schemas.items():
                jsonschema.Draft202012Validator.check_schema(schema)
                validator = jsonschema.Draft202012Validator(schema, registry=registry, format_checker=checker)
                for example in schema.get("examples", []):
                    validator.validate(example)
            for line in sys.stdin:
                name, value = line.rstrip("\\n").split("\\t", 1)
                schema = schemas[name + ".schema.json"]
                jsonschema.Draft202012Validator(schema, registry=registry, format_checker=checker).validate(json.loads(value))
            print("validated", len(schemas))
            """
        var input: [UInt8] = []
        for (schema, value) in written { input += Array("\(schema)\t".utf8) + value + [UInt8(ascii: "\n")] }
        let result = try await ChildProcess.run(
            try PythonTools.path("python3"), ["-c", script, Self.docs.appendingPathComponent("schemas").path],
            input: input)
        let printed = result.output + result.error
        #expect(result.status == 0, "\(printed)")
        #expect(printed.contains("validated 6"), "\(printed)")
    }

    /// A context with every field the schema has, at every level.
    static let fullContext = #"""
        {"userId":"u-1","version":3,"focus":"Work","expiresAt":"2030-01-01T00:00:00Z","allowTimeSensitive":false,
         "hideBadges":true,"otherApps":"silence",
         "apps":{"chat":{"filterPredicate":"SELF == 'work'","silenced":true,"parameters":{"account":"w"}}},
         "people":{"allowed":["boss"],"silenced":["spam"],"allowRepeated":true},
         "rateLimits":{"perUser":{"max":20,"windowSeconds":3600},"perApp":{"max":5,"windowSeconds":600},"exempt":["critical"]},
         "timeZone":"Europe/Paris","focusSetAt":"2029-12-31T00:00:00Z",
         "foci":{"Sleep":{"allowTimeSensitive":false,"hideBadges":true,"otherApps":"silence","apps":{},
                          "people":{"allowed":[],"silenced":[],"allowRepeated":false},"rateLimits":{"exempt":[]},
                          "sharesStatus":false}},
         "schedules":[{"focus":"Sleep","days":["mon"],"start":"22:00","end":"07:00"}],
         "sharesStatus":false,"summaries":{"atFocusEnd":false,"times":["08:00"]}}
        """#

    @Test(
        "focus-context.schema.json has the fields the code reads and writes, at every level, both ways: a full context round-trips through the real decoder and encoder, and each stored property is a property of the schema"
    )
    func contextSchemaIsTheCode() throws {
        let schema = try Self.schema("focus-context")
        let definitions = schema["$defs"] as? [String: [String: Any]] ?? [:]
        /// The schema object a reference or an inline object names.
        func resolve(_ node: Any?) -> [String: Any] {
            guard let object = node as? [String: Any] else { return [:] }
            guard let reference = object["$ref"] as? String else { return object }
            let parts = reference.split(separator: "/").map(String.init)
            if parts.count == 3, parts[1] == "$defs" { return definitions[parts[2]] ?? [:] }
            if parts.count == 3, parts[1] == "properties" {
                return resolve((schema["properties"] as? [String: Any])?[parts[2]])
            }
            return [:]
        }
        func properties(_ node: [String: Any]) -> Set<String> {
            Set((node["properties"] as? [String: Any] ?? [:]).keys)
        }

        // Schema → code: every field survives the real decoder and encoder.
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(Self.fullContext.utf8)) as? [String: Any])
        let context = try FocusContext.decode(from: Data(Self.fullContext.utf8))
        let encoded = try #require(try JSONSerialization.jsonObject(with: context.encoded()) as? [String: Any])
        func keys(_ object: Any?, _ path: [String]) -> Set<String> {
            var node = object
            for step in path { node = (node as? [String: Any])?[step] ?? (node as? [Any])?.first }
            return Set((node as? [String: Any] ?? [:]).keys)
        }
        let levels: [(path: [String], schema: [String: Any])] = [
            ([], schema),
            (
                ["apps", "chat"],
                resolve((resolve((schema["properties"] as? [String: Any])?["apps"]))["additionalProperties"])
            ),
            (["people"], resolve((schema["properties"] as? [String: Any])?["people"])),
            (["rateLimits"], resolve((schema["properties"] as? [String: Any])?["rateLimits"])),
            (["rateLimits", "perUser"], definitions["rateLimit"] ?? [:]),
            (["foci", "Sleep"], definitions["focusConfiguration"] ?? [:]),
            (["schedules", "0"], definitions["schedule"] ?? [:]),
            (["summaries"], resolve((schema["properties"] as? [String: Any])?["summaries"])),
        ]
        for (path, level) in levels {
            let documented = properties(level)
            #expect(!documented.isEmpty, "\(path): the schema has properties")
            #expect(keys(document, path) == documented, "\(path): the test's context has every documented field")
            #expect(
                keys(encoded, path) == documented,
                "\(path): read and written by the code \(keys(encoded, path).sorted()), documented \(documented.sorted())"
            )
        }

        // Code → schema: every stored property of each type is a documented field.
        func stored(_ value: Any) -> Set<String> {
            Set(Mirror(reflecting: value).children.compactMap(\.label).map { $0 == "userID" ? "userId" : $0 })
        }
        let sleep = try #require(context.foci["Sleep"])
        let pairs: [(name: String, value: Any, schema: [String: Any])] = [
            ("FocusContext", context, schema),
            ("AppFilter", try #require(context.apps["chat"]), levels[1].schema),
            ("People", try #require(context.people), levels[2].schema),
            ("RateLimits", try #require(context.rateLimits), levels[3].schema),
            ("RateLimits.Limit", try #require(context.rateLimits?.perUser), levels[4].schema),
            ("FocusConfiguration", sleep, levels[5].schema),
            ("Schedule", try #require(context.schedules.first), levels[6].schema),
            ("Summaries", try #require(context.summaries), levels[7].schema),
        ]
        for (name, value, level) in pairs {
            let undocumented = stored(value).subtracting(properties(level))
            #expect(undocumented.isEmpty, "\(name) stores \(undocumented.sorted()), which the schema lacks")
        }
    }

    @Test("AsyncAPI: its operations are the topics FocusGate reads (receive) and writes (send), both ways")
    func asyncAPIOperationsAreTheUsages() throws {
        let document = try Self.asyncAPI()
        let channels = try #require(document["channels"] as? [String: [String: Any]])
        let operations = try #require(document["operations"] as? [String: [String: Any]])
        var documented: Set<String> = []
        for (name, operation) in operations {
            let reference = (operation["channel"] as? [String: Any])?["$ref"] as? String ?? ""
            let channel = String(reference.split(separator: "/").last ?? "")
            let address = try #require(channels[channel]?["address"] as? String, "\(name): \(reference)")
            documented.insert("\(operation["action"] as? String ?? "?") \(address)")
        }
        var used: Set<String> = []
        for usage in TopicNames().usages {
            if usage.isRead { used.insert("receive \(usage.name)") }
            if usage.isWritten { used.insert("send \(usage.name)") }
        }
        #expect(
            documented == used,
            "documented only: \(documented.subtracting(used).sorted()); used only: \(used.subtracting(documented).sorted())"
        )
    }

    @Test("AsyncAPI: every topic of the code is a channel, every reason and DLQ code is in the headers, payloads exist")
    func asyncAPICoversTheCode() throws {
        let document = try Self.asyncAPI()
        #expect(document["asyncapi"] as? String == "3.0.0")
        let channels = try #require(document["channels"] as? [String: [String: Any]])
        let addresses = Set(channels.values.compactMap { $0["address"] as? String })
        let topics = TopicNames()
        #expect(
            addresses
                == [
                    topics.notifications, topics.invalidations, topics.delivered, topics.silenced, topics.badges,
                    topics.deadLetters, topics.state, topics.status, topics.summaries,
                ])
        let components = try #require(document["components"] as? [String: Any])
        let schemas = try #require(components["schemas"] as? [String: [String: Any]])
        func enumeration(_ schema: String, _ header: String) -> Set<String> {
            let properties = schemas[schema]?["properties"] as? [String: [String: Any]]
            return Set(properties?[header]?["enum"] as? [String] ?? [])
        }
        #expect(enumeration("decisionHeaders", "focusgate-reason") == Set(Decision.Reason.all.map(\.rawValue)))
        #expect(enumeration("errorHeaders", "focusgate-error") == Set(EventDecodingError.Code.all.map(\.rawValue)))
        let messages = try #require(components["messages"] as? [String: [String: Any]])
        for (name, message) in messages {
            guard let reference = (message["payload"] as? [String: Any])?["$ref"] as? String else { continue }
            #expect(
                FileManager.default.fileExists(atPath: Self.docs.appendingPathComponent(reference).path),
                "\(name): \(reference)")
        }
    }
}
