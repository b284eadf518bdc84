import FocusGate
import FocusGateCore
import Foundation
import HTTPTypes
import Hummingbird
import Testing
import Yams

/// docs/openapi.yaml is what the server serves and what it does: same routes, examples accepted.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    static let documentPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")

    static func document() throws -> [String: Any] {
        let text = try String(contentsOf: Self.documentPath, encoding: .utf8)
        return try #require(try Yams.load(yaml: text) as? [String: Any])
    }

    @Test("GET /openapi.yaml serves docs/openapi.yaml byte for byte, an OpenAPI 3.1 document")
    func served() async throws {
        let fixture = try await AdminFixture()
        let onDisk = try Data(contentsOf: Self.documentPath)
        try await LiveServer.run(fixture.router(token: "secret")) { client in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok, "open even with a token")
                #expect(response.headers[.contentType] == "application/yaml")
                #expect(Data(buffer: response.body) == onDisk)
            }
        }
        #expect(try Self.document()["openapi"] as? String == "3.1.0")
        await fixture.shutdown()
    }

    @Test("every route the server has is in the document, and every operation of the document is a route")
    func routesMatch() async throws {
        let fixture = try await AdminFixture()
        let paths = try #require(try Self.document()["paths"] as? [String: [String: Any]])
        var documented: Set<String> = []
        for (path, item) in paths {
            for method in item.keys where ["get", "put", "post", "delete", "patch"].contains(method) {
                documented.insert("\(method.uppercased()) \(path)")
            }
        }
        let api = AdminAPI(
            configuration: .init(), store: fixture.store,
            publisher: KafkaInvalidationPublisher(producer: fixture.producer, topic: fixture.topic),
            users: fixture.users, registry: fixture.registry, logger: testLogger,
            readiness: { Readiness(checks: [:]) })
        let served = Set(api.router().routes.map { "\($0.method.rawValue) \($0.path)" })
        #expect(served.count >= 9)
        #expect(
            served == documented,
            "served only: \(served.subtracting(documented)); documented only: \(documented.subtracting(served))")
        await fixture.shutdown()
    }

    @Test("the document's examples are accepted by the real decoders and server")
    func examplesAccepted() async throws {
        let fixture = try await AdminFixture()
        let paths = try #require(try Self.document()["paths"] as? [String: [String: Any]])
        func example(_ path: String, _ method: String) throws -> Data {
            let operation = try #require(paths[path]?[method] as? [String: Any])
            let body = try #require(operation["requestBody"] as? [String: Any])
            let content = try #require((body["content"] as? [String: Any])?["application/json"] as? [String: Any])
            return try JSONSerialization.data(withJSONObject: try #require(content["example"]))
        }
        let context = try example("/v1/users/{userId}/context", "put")
        let decoded = try FocusContext.decode(from: context)
        let explain = try example("/v1/explain", "post")
        // The explain answer's fields as documented: every one required, since every one is always there.
        let answer = try #require(
            ((((paths["/v1/explain"]?["post"] as? [String: Any])?["responses"] as? [String: Any])?["200"]
                as? [String: Any])?["content"] as? [String: Any])?["application/json"] as? [String: Any])
        let answerSchema = try #require(answer["schema"] as? [String: Any])
        let required = Set(answerSchema["required"] as? [String] ?? [])
        let documented = Set((answerSchema["properties"] as? [String: Any] ?? [:]).keys)
        #expect(required == documented, "every documented field of the answer is required")
        try await LiveServer.run(fixture.router()) { client in
            try await client.execute(
                uri: "/v1/users/\(decoded.userID)/context", method: .put, headers: [.contentType: "application/json"],
                body: ByteBuffer(data: context)
            ) { #expect($0.status == .ok, "\(String(buffer: $0.body))") }
            try await client.execute(
                uri: "/v1/explain", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(data: explain)
            ) {
                #expect($0.status == .ok, "\(String(buffer: $0.body))")
                let body = try JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as? [String: Any]
                let fields = Set(body?.keys ?? [:].keys)
                #expect(
                    fields == required,
                    "answered only: \(fields.subtracting(required).sorted()); documented only: \(required.subtracting(fields).sorted())"
                )
            }
        }
        await fixture.shutdown()
    }
}
