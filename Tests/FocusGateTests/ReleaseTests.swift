import FocusGate
import FocusGateHarness
import FocusGateKafka
import Foundation
import Testing

/// What a company needs before it may run FocusGate: a licence, one version everywhere, a
/// changelog and a security policy; and a start that refuses a placeholder secret.
@Suite("Release: licence, version, changelog")
struct ReleaseTests {
    static let root = OperationsFilesTests.root

    static func text(_ path: String) throws -> String {
        try String(contentsOf: self.root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("LICENSE is the Apache License 2.0; NOTICE and SECURITY.md are there")
    func licence() throws {
        let licence = try Self.text("LICENSE")
        #expect(licence.contains("Apache License") && licence.contains("Version 2.0, January 2004"))
        #expect(licence.contains("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION"))
        #expect(try Self.text("NOTICE").contains("Apache License, Version 2.0"))
        let security = try Self.text("SECURITY.md")
        #expect(security.contains("## Reporting a vulnerability") && security.contains("## Supported versions"))
    }

    @Test("the version is semantic and CHANGELOG.md's newest release")
    func changelog() throws {
        let version = FocusGateRelease.version
        #expect(version.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+/) != nil)
        let releases = try Self.text("CHANGELOG.md").split(separator: "\n").filter { $0.hasPrefix("## [") }
        #expect(releases.first == "## [Unreleased]", "Keep a Changelog: unreleased changes first")
        #expect(
            releases.dropFirst().first?.hasPrefix("## [\(version)] - ") == true,
            "the newest release is \(version): \(releases.prefix(2))")
    }

    @Test("focusgate --version prints the version and the librdkafka it runs")
    func versionOption() async throws {
        let result = try await ChildProcess.run(ServeProcess.siblingExecutable.path, ["--version"])
        #expect(result.status == 0)
        #expect(
            result.output.trimmingCharacters(in: .whitespacesAndNewlines)
                == "\(FocusGateRelease.version) (librdkafka \(RDKafkaLibrary.version))", "\(result.output)")
    }

    @Test("serve with admin.host 0.0.0.0 and the token change-me exits 2 naming admin.token, before it listens")
    func placeholderToken() async throws {
        let result = try await ChildProcess.run(
            ServeProcess.siblingExecutable.path, ["serve"],
            environment: [
                "FOCUSGATE_ADMIN_HOST": "0.0.0.0", "FOCUSGATE_ADMIN_TOKEN": "change-me",
                "FOCUSGATE_ADMIN_PORT": "\(freeLoopbackPort())",
            ])
        #expect(result.status == 2 && !result.bySignal)
        #expect(result.error.contains("admin.token"), "\(result.error)")
        #expect(!result.output.contains("admin: http"), "it never started serving")
    }
}
