import FocusGate
import FocusGateHarness
import FocusGateCore
import FocusGateKafka
import Foundation
import Testing
import Yams

extension EmbeddedBrokerTests {
    /// The headers FocusGate writes, read back from every topic after a run, against the headers
    /// docs/asyncapi.yaml gives each channel's messages, both ways.
    @Suite("AsyncAPI headers against what the gateway writes")
    struct AsyncAPIHeadersTests {
        static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/asyncapi.yaml")

        /// The header names the document gives each topic (by address): the union over the
        /// channel's messages of their headers schema's properties.
        static func documentedHeaders() throws -> [String: Set<String>] {
            let text = try String(contentsOf: Self.document, encoding: .utf8)
            let document = try #require(try Yams.load(yaml: text) as? [String: Any])
            let channels = try #require(document["channels"] as? [String: [String: Any]])
            let components = try #require(document["components"] as? [String: Any])
            let messages = try #require(components["messages"] as? [String: [String: Any]])
            let schemas = try #require(components["schemas"] as? [String: [String: Any]])
            func last(_ reference: Any?) -> String {
                String(((reference as? [String: Any])?["$ref"] as? String ?? "").split(separator: "/").last ?? "")
            }
            var headers: [String: Set<String>] = [:]
            for channel in channels.values {
                let address = try #require(channel["address"] as? String)
                var names: Set<String> = []
                for reference in (channel["messages"] as? [String: Any] ?? [:]).values {
                    let schema = last(messages[last(reference)]?["headers"])
                    names.formUnion((schemas[schema]?["properties"] as? [String: Any] ?? [:]).keys)
                }
                headers[address] = names
            }
            return headers
        }

        @Test("every header FocusGate writes on a topic is documented for it, and every documented one is written")
        func headersMatch() async throws {
            let bench = try await GatewayBench()
            let instance = try await InProcessGateway(bench, configuration: bench.configuration())
            try await bench.put(GatewayScenarioTests.GatewayEndToEndTests.context("u-1", version: 1))
            try await instance.waitUntil { instance.invalidationsHandled >= 1 }
            try bench.send([
                Events.notification("n-1", user: "u-1", criteria: "work"),
                Events.notification("n-2", user: "u-1", criteria: "home"),
                Events.notification("n-3", user: "u-2"),
                ("u-3", "not json"),
            ])
            _ = try await bench.settled(records: 4)
            // On the embedded broker the group's offsets can move before the transaction's
            // outputs are written (they stand in for its offsets): wait for the outputs too.
            _ = try await bench.waitForOutputs(3)
            let documented = try Self.documentedHeaders()
            // The inputs carry no headers: everything on the outputs is FocusGate's.
            var everyHeader: Set<String> = []
            for usage in bench.topics.usages where usage.isWritten {
                var written: Set<String> = []
                let messages = try bench.readAll(usage.name)
                for message in messages { written.formUnion(message.headers.map(\.name)) }
                everyHeader.formUnion(written)
                // The reasons read, to tell a context not found from outputs not read.
                let reasons = messages.map { "\(Audit.id(of: $0) ?? "?"): \($0.header("focusgate-reason") ?? "-")" }
                #expect(
                    written == documented[usage.name] ?? [],
                    "\(usage.name): written \(written.sorted()), documented \((documented[usage.name] ?? []).sorted()); read \(reasons)"
                )
            }
            // docs/contract.md's "Outputs and headers" names the same headers.
            let section = try ProjectDocuments.section("Outputs and headers")
            let regex = try NSRegularExpression(pattern: "`(focusgate-[a-z-]+|as-of)`")
            let named = Set(
                regex.matches(in: section, range: NSRange(section.startIndex..., in: section)).map {
                    String(section[Range($0.range(at: 1), in: section)!])
                })
            #expect(
                named == everyHeader,
                "docs/contract.md only: \(named.subtracting(everyHeader).sorted()); written only: \(everyHeader.subtracting(named).sorted())"
            )
            try await instance.stop()
            await bench.shutdown()
        }
    }
}
