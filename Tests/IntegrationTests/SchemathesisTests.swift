import FocusGateHarness
import Foundation
import Testing

extension EmbeddedBrokerTests {
    /// schemathesis (PyPI) sends requests generated from docs/openapi.yaml to a real `focusgate
    /// serve`: no 5xx, and every status, content type and body as the document says.
    @Suite("OpenAPI document against the running server")
    struct SchemathesisTests {
        @Test("schemathesis: no server error, every response matching docs/openapi.yaml")
        func generatedRequests() async throws {
            let bench = try await GatewayBench()
            let serve = try await ServeProcess(bench)
            #expect(try await serve.waitUntilReady())
            let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml").path
            // schemathesis keeps a database of examples in its working folder: a new temporary one
            // each run (not the repository), so that every run sends what the seed says.
            let workingDirectory = try ScratchDirectory.process.directory("schemathesis")
            defer { try? FileManager.default.removeItem(atPath: workingDirectory) }
            let result = try await ChildProcess.run(
                try PythonTools.path("schemathesis"),
                [
                    "run", document, "--url", "http://127.0.0.1:\(serve.adminPort)",
                    "--checks",
                    "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
                    "--max-examples", "25", "--seed", "1", "--no-color",
                ], workingDirectory: workingDirectory)
            let output = result.output + result.error
            #expect(result.status == 0, "\(output.suffix(6000))")
            let operations =
                try String(contentsOfFile: document, encoding: .utf8).components(separatedBy: "operationId:")
                .count - 1
            #expect(output.contains("Tested: \(operations)"), "every operation of the document was exercised")
            #expect(await serve.stop(SIGTERM) == 0)
            await bench.shutdown()
        }
    }
}
