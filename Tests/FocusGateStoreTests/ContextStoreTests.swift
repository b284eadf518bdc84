import FocusGateCore
import FocusGateStore
import FocusGateHarness
import Foundation
import Logging
import Testing

/// The stores under test: the same suite runs against a SQLite file and a real PostgreSQL server.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { self.rawValue }
}

let storeLogger: Logger = {
    var logger = Logger(label: "focusgate.store.tests") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .critical
    return logger
}()

/// Opens a fresh store of `kind` (a new SQLite file, or a new PostgreSQL database) and runs `body`.
func withStore<R>(_ kind: StoreKind, _ body: (any ContextStore) async throws -> R) async throws -> R {
    switch kind {
    case .sqlite:
        let path = ScratchDirectory.process.file("store", extension: "sqlite")
        let store = try await SQLiteContextStore.open(path: path, logger: storeLogger)
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let result = try await body(store)
        await store.close()
        return result
    case .postgres:
        let server = try PostgresServer.start()
        let database = "test_\(UUID().uuidString.prefix(8).lowercased())"
        try server.psql("CREATE DATABASE \(database)")
        let store = try PostgresContextStore(url: server.url(database: database), logger: storeLogger)
        try await store.migrate()
        let result = try await body(store)
        await store.close()
        return result
    }
}

func context(_ userID: String, version: Int64, focus: String? = "Work", predicate: String = "SELF IN {'work'}")
    -> FocusContext
{
    FocusContext.fixture(
        userID, version: version, focus: focus, expiresAt: Date(timeIntervalSince1970: 1_900_000_000),
        apps: [
            "com.example.chat": .init(
                filterPredicate: predicate, parameters: .object(["account": .string("work-\(userID)")]))
        ])
}

@Suite("Context stores (SQLite and PostgreSQL)", .serialized)
struct ContextStoreTests {
    @Test("put then load returns the same document", arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let document = context("u-1", version: 3)
            do { let value = try await store.put(document); #expect(value == .stored) }
            do { let value = try await store.context(for: "u-1"); #expect(value == document) }
            do { let value = try await store.context(for: "nobody"); #expect(value == nil) }
        }
    }

    @Test("versions only move forward; a deleted context keeps its version as a floor", arguments: StoreKind.allCases)
    func versionRules(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            do { let value = try await store.put(context("u", version: 5)); #expect(value == .stored) }
            do {
                let value = try await store.put(context("u", version: 5, focus: "Sleep"));
                #expect(value == .stale(currentVersion: 5))
            }
            do {
                let value = try await store.put(context("u", version: 4)); #expect(value == .stale(currentVersion: 5))
            }
            do { let value = try await store.context(for: "u")?.focus; #expect(value == "Work") }
            do { let value = try await store.put(context("u", version: 6, focus: "Sleep")); #expect(value == .stored) }
            do { let value = try await store.context(for: "u")?.focus; #expect(value == "Sleep") }

            do { let value = try await store.delete(userID: "u"); #expect(value == 6) }
            do { let value = try await store.delete(userID: "u"); #expect(value == nil) }
            do { let value = try await store.context(for: "u"); #expect(value == nil) }
            do {
                let value = try await store.put(context("u", version: 6)); #expect(value == .stale(currentVersion: 6))
            }
            do { let value = try await store.put(context("u", version: 7)); #expect(value == .stored) }
        }
    }

    @Test("many users load with one call, including more than one query's worth", arguments: StoreKind.allCases)
    func batchLoad(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for index in 0..<1200 where index % 2 == 0 {
                _ = try await store.put(context("user-\(index)", version: Int64(index)))
            }
            let asked = (0..<12_000).map { "user-\($0)" } + ["user-0", "user-2"]
            let loaded = try await store.contexts(for: asked)
            #expect(loaded.count == 600)
            #expect(loaded["user-1198"]?.version == 1198)
            #expect(loaded["user-1"] == nil)
            do { let value = try await store.contexts(for: []); #expect(value.isEmpty) }
        }
    }

    @Test(
        "look-alike user ids (NFC and NFD, a Kelvin sign for K) are rows of their own, loaded apart in one call",
        arguments: StoreKind.allCases)
    func lookAlikeIDs(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let pairs = [("caf\u{E9}", "cafe\u{301}"), ("Kata0", "\u{212A}ata0")]
            for (real, _) in pairs { _ = try await store.put(context(real, version: 5)) }
            let loaded = try await store.contexts(for: pairs.flatMap { [$0.1, $0.0] })
            #expect(loaded.count == 2)
            for (real, lookAlike) in pairs {
                #expect(loaded[UserID(real)]?.version == 5)
                #expect(loaded[UserID(lookAlike)] == nil, "\(Array(lookAlike.utf8))")
                #expect(try await store.context(for: lookAlike) == nil)
                // The look-alike's own write is a row of its own, and leaves the real user's alone.
                _ = try await store.put(context(lookAlike, version: 1))
                #expect(try await store.context(for: lookAlike)?.version == 1)
                #expect(try await store.context(for: real)?.version == 5)
                #expect(try await store.delete(userID: lookAlike) == 1)
                #expect(try await store.context(for: real)?.version == 5)
            }
        }
    }

    @Test("unicode, quotes and long predicates survive storage", arguments: StoreKind.allCases)
    func content(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let document = context(
                "ü'ser\"-😀", version: 1, focus: "Trabajo ☀︎",
                predicate: "SELF IN %@".replacingOccurrences(
                    of: "%@", with: "{" + (0..<300).map { "'acct-\($0)'" }.joined(separator: ",") + "}"))
            _ = try await store.put(document)
            do { let value = try await store.context(for: "ü'ser\"-😀"); #expect(value == document) }
        }
    }

    @Test("ping answers while the store is reachable", arguments: StoreKind.allCases)
    func ping(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.ping()
        }
    }

    @Test("SQLite: the file persists across reopen and migrations are applied once")
    func sqliteReopen() async throws {
        let path = ScratchDirectory.process.file("store", extension: "sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let first = try await SQLiteContextStore.open(path: path, logger: storeLogger)
        _ = try await first.put(context("u", version: 1))
        await first.close()
        let second = try await SQLiteContextStore.open(path: path, logger: storeLogger)
        do { let value = try await second.context(for: "u")?.version; #expect(value == 1) }
        await second.close()
    }

    @Test("PostgreSQL: a bad URL is refused with a clear error")
    func postgresURL() {
        #expect(throws: ContextStoreError.self) { _ = try PostgresContextStore(url: "mysql://x", logger: storeLogger) }
        #expect(throws: ContextStoreError.self) {
            _ = try PostgresContextStore(url: "postgres://u@h/db?sslmode=maybe", logger: storeLogger)
        }
    }

    @Test(
        "PostgreSQL TLS: verify-full by default, so a server without TLS is never used in plaintext; prefer and an unreadable sslrootcert are refused"
    )
    func postgresTLS() async throws {
        let server = try PostgresServer.startPrivate()
        defer { server.destroy() }
        let plaintext = server.url.replacingOccurrences(of: "?sslmode=disable", with: "")
        #expect(plaintext != server.url)
        let verifying = try PostgresContextStore(url: plaintext, logger: storeLogger)
        await #expect(throws: ContextStoreError.self, "the server offers no TLS: no connection") {
            try await verifying.ping()
        }
        await verifying.close()
        let explicit = try PostgresContextStore(url: server.url, logger: storeLogger)
        try await explicit.ping()
        await explicit.close()
        for refused in [
            plaintext + "?sslmode=prefer", plaintext + "?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
        ] {
            #expect(throws: ContextStoreError.self, "\(refused)") {
                _ = try PostgresContextStore(url: refused, logger: storeLogger)
            }
        }
        #expect(throws: Never.self) {
            _ = try PostgresContextStore(url: plaintext + "?sslmode=verify-ca", logger: storeLogger)
            _ = try PostgresContextStore(url: plaintext + "?sslmode=require", logger: storeLogger)
        }
    }

    @Test("PostgreSQL: stopped server → unavailable errors; restarted → works again without a new client")
    func postgresOutage() async throws {
        let server = try PostgresServer.startPrivate()
        defer { server.destroy() }
        let store = try PostgresContextStore(url: server.url, logger: storeLogger)
        try await store.migrate()
        do {
            _ = try await store.put(context("outage", version: Int64(Date().timeIntervalSince1970 * 1000)))
            try server.stopServer()
            let stopped = ContinuousClock.now
            await #expect(throws: ContextStoreError.self) { try await store.ping() }
            #expect(ContinuousClock.now - stopped < .seconds(1), "a down server fails fast")
            try server.startServer()
            let restarted = ContinuousClock.now
            try await Wait.until("the store reading again after the restart", timeout: .seconds(10)) {
                (try? await store.context(for: "outage")) != nil
            }
            #expect(ContinuousClock.now - restarted < .seconds(5), "recovery is immediate")
        }
    }
}
