import FocusGateKafka
import FocusGateHarness
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

/// The committed bad-input corpus, `Tests/BadInputCorpus` (its README gives the format).
enum BadInputCorpus {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("BadInputCorpus")

    /// The rows of a tab-separated manifest, comments skipped.
    static func manifest(_ name: String) throws -> [[String]] {
        let text = try String(contentsOf: self.directory.appendingPathComponent(name), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
    }

    /// A corpus file's bytes; `-` is an absent value, `gen:oversize` a JSON body just over 1 MiB,
    /// `gen:near-limit` a valid context of about 999,900 bytes (under the body limit, over what
    /// an invalidation record carries).
    static func bytes(_ folder: String, _ name: String) throws -> [UInt8]? {
        switch name {
        case "-": return nil
        case "gen:oversize":
            return Array(#"{"userId":"u-ctx","version":9,"padding":""#.utf8) + [UInt8](repeating: 0x70, count: 1 << 20)
                + Array(#""}"#.utf8)
        case "gen:near-limit":
            return Array(#"{"userId":"u-ctx","version":9,"apps":{"chat":{"parameters":{"padding":""#.utf8)
                + [UInt8](repeating: 0x70, count: 999_800) + Array(#""}}}}"#.utf8)
        default: return try Array(Data(contentsOf: self.directory.appendingPathComponent(folder + "/" + name)))
        }
    }

    static func key(_ column: String) -> [UInt8]? { column == "-" ? nil : Array(column.utf8) }
}

extension EmbeddedBrokerTests {
    /// Every entry of the bad-input corpus against one `focusgate serve` process: each gets its
    /// documented outcome, nothing is lost, and the process stays up.
    @Suite("Bad-input corpus, end to end")
    struct BadInputCorpusTests {
        static let token = "corpus-token"

        /// One admin request; the status and, for errors, the `error` code of the JSON body.
        static func request(
            _ serve: ServeProcess, _ method: String, _ path: String, authorization: String?, body: [UInt8]? = nil
        ) async throws -> (status: Int, error: String?) {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(serve.adminPort)\(path)")!)
            request.httpMethod = method
            request.timeoutInterval = 10
            if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
            if let body {
                request.httpBody = Data(body)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            let (data, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            return (status, object?["error"] as? String)
        }

        static func context(version: Int, predicate: String, userID: String = "u-ctx") -> [UInt8] {
            Array(
                #"{"userId":"\#(userID)","version":\#(version),"focus":"Work","apps":{"chat":{"filterPredicate":"\#(predicate)"}}}"#
                    .utf8)
        }

        @Test("events, invalidations and admin requests from the corpus: documented outcomes, nothing lost, still up")
        func corpus() async throws {
            let bench = try await GatewayBench()
            let serve = try await ServeProcess(
                bench, environment: ["FOCUSGATE_ADMIN_TOKEN": Self.token, "FOCUSGATE_LIMITS_MAXEVENTBYTES": "65536"])
            #expect(try await serve.waitUntilReady())
            let bearer = "Bearer \(Self.token)"
            let setUp = try await Self.request(
                serve, "PUT", "/v1/users/u-ctx/context", authorization: bearer,
                body: Self.context(version: 1, predicate: "SELF == 'work'"))
            #expect(setUp.status == 200)
            // Its look-alike `u-\u{212A}` (a Kelvin sign) is another user, without a context.
            let kelvinSetUp = try await Self.request(
                serve, "PUT", "/v1/users/u-K/context", authorization: bearer,
                body: Self.context(version: 1, predicate: "SELF == 'work'", userID: "u-K"))
            #expect(kelvinSetUp.status == 200)

            try await self.events(bench)
            try await self.invalidations(bench, serve)
            try await self.adminRequests(serve, bearer: bearer)

            #expect(serve.isRunning, "the process stays up")
            #expect(try await Self.request(serve, "GET", "/healthz", authorization: nil).status == 200)
            #expect(await serve.stop(SIGTERM) == 0)
            await bench.shutdown()
        }

        /// Each corpus event, then good sentinels: one outcome per input, as the manifest says.
        private func events(_ bench: GatewayBench) async throws {
            let entries = try BadInputCorpus.manifest("events.tsv")
            let records = try entries.map {
                (key: BadInputCorpus.key($0[1]), value: try BadInputCorpus.bytes("events", $0[0]))
            }
            let sentinels = (0..<20).map { Events.notification("sentinel-\($0)", user: "u-sentinel-\($0 % 4)") }
            let reports = try KafkaTestSupport.produce(
                bench.cluster, topic: bench.topics.notifications,
                bytes: records + sentinels.map { (Array($0.key!.utf8), Array($0.value.utf8)) })
            #expect(reports.count == entries.count + sentinels.count && reports.allSatisfy { $0.error == nil })
            let audit = try await bench.settled(records: reports.count)

            // Outcomes by the input they came from (`focusgate-source`).
            var outcomes: [String: [String]] = [:]
            for (messages, topic) in [(audit.delivered, "delivered"), (audit.silenced, "silenced")] {
                for message in messages {
                    outcomes[message.header("focusgate-source") ?? "?", default: []].append(
                        "\(topic) \(message.header("focusgate-reason") ?? "?")")
                }
            }
            for message in audit.deadLetters {
                outcomes[message.header("focusgate-source") ?? "?", default: []].append(
                    "dlq \(message.header("focusgate-error") ?? "?")")
            }
            func outcome(_ report: DeliveryOutcome) -> [String] {
                outcomes["\(bench.topics.notifications)/\(report.partition)/\(report.offset ?? -1)"] ?? []
            }
            for (entry, report) in zip(entries, reports) {
                #expect(outcome(report) == [entry[2]], "\(entry[0])")
            }
            for report in reports.dropFirst(entries.count) {
                #expect(outcome(report) == ["delivered no-focus"], "a sentinel after the corpus")
            }
            print("bad-input corpus: \(entries.count) events, each with its documented outcome")
        }

        /// Each corpus invalidation, in order: counted by kind as the manifest says; the context
        /// that results is the one the last valid, newer message gave.
        private func invalidations(_ bench: GatewayBench, _ serve: ServeProcess) async throws {
            let entries = try BadInputCorpus.manifest("invalidations.tsv")
            let kinds = ["applied", "dropped", "stale", "not-cached", "unavailable", "invalid"]
            func counts() async -> [String: Int] {
                var result: [String: Int] = [:]
                for kind in kinds {
                    result[kind] = Int(await serve.metric(#"focusgate_invalidations_total{kind="\#(kind)"}"#))
                }
                return result
            }
            let before = await counts()
            let records = try entries.map {
                (key: BadInputCorpus.key($0[1]), value: try BadInputCorpus.bytes("invalidations", $0[0]))
            }
            let reports = try KafkaTestSupport.produce(bench.cluster, topic: bench.topics.invalidations, bytes: records)
            #expect(reports.allSatisfy { $0.error == nil })
            var expected = before
            for entry in entries { expected[entry[2], default: 0] += 1 }
            let after = try? await Wait.for("invalidations counted by kind", { await counts() }) { $0 == expected }
            #expect(after == expected, "invalidations counted by kind")

            // Only `newer-inline` (version 2, SELF == 'home') took effect.
            // Counted before the send: the gateway may commit the new record before a count after it.
            let consumed = try bench.committedOffsets().values.reduce(0, +)
            try bench.send([Events.notification("after-invalidations", user: "u-ctx", criteria: "home")])
            let audit = try await bench.settled(records: Int(consumed) + 1, timeout: .seconds(30))
            let decided = audit.delivered.first { Audit.id(of: $0) == "after-invalidations" }
            #expect(decided?.header("focusgate-reason") == "predicate-match")
            #expect(decided?.header("focusgate-context-version") == "2")
        }

        /// Each corpus admin request: its status and error code.
        private func adminRequests(_ serve: ServeProcess, bearer: String) async throws {
            let entries = try BadInputCorpus.manifest("http.tsv")
            for entry in entries {
                let authorization: String? =
                    switch entry[3] {
                    case "token": bearer
                    case "wrong": "Bearer not-the-token"
                    case "basic": "Basic Zm9jdXM6Z2F0ZQ=="
                    default: nil
                    }
                let response = try await Self.request(
                    serve, entry[1], entry[2], authorization: authorization,
                    body: try BadInputCorpus.bytes("http", entry[4]))
                #expect(response.status == Int(entry[5]), "\(entry[0])")
                if entry[6] != "-" { #expect(response.error == entry[6], "\(entry[0])") }
            }
            print("bad-input corpus: \(entries.count) admin requests, each with its documented status")
        }
    }
}
