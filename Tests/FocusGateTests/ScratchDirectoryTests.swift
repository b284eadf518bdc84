import FocusGateHarness
import FocusGateStore
import Foundation
import Testing

/// Test and benchmark processes keep their files in a scratch directory that goes when they end
/// (`scripts/test.sh` fails a run that leaves anything named `focusgate-*` in the temporary directory).
@Suite("scratch directory")
struct ScratchDirectoryTests {
    @Test("files and directories go with it, an open SQLite store's included")
    func removesEverything() async throws {
        let scratch = ScratchDirectory(prefix: "focusgate-scratch-test")
        let input = scratch.file("input", extension: "json")
        try "{}".write(toFile: input, atomically: true, encoding: .utf8)
        let store = try await SQLiteContextStore.open(
            path: scratch.file("store", extension: "sqlite"), logger: testLogger)
        _ = try await store.put(workContext("u", version: 1))
        let working = try scratch.directory("working")
        try "x".write(toFile: working + "/examples", atomically: true, encoding: .utf8)
        #expect(input.hasPrefix(scratch.path + "/"))
        // The input, the working directory, the store (and SQLite's -wal and -shm beside it).
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).count >= 3)
        scratch.remove()
        #expect(!FileManager.default.fileExists(atPath: scratch.path))
        await store.close()
    }

    @Test("paths are new each time, and the process's directory is under the temporary one")
    func uniquePaths() {
        let first = ScratchDirectory.process.file("store", extension: "sqlite")
        let second = ScratchDirectory.process.file("store", extension: "sqlite")
        #expect(first != second)
        #expect(first.hasPrefix(NSTemporaryDirectory()))
        #expect(FileManager.default.fileExists(atPath: ScratchDirectory.process.path))
    }
}
