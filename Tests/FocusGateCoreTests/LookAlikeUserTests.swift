import Testing

@testable import FocusGateCore

/// User ids that are one `String` (canonically equivalent) but differ in bytes are two users, as
/// Kafka keys and the stores say they are.
@Suite("Look-alike user ids")
struct LookAlikeUserTests {
    /// Pairs of ids equal as Swift strings and different as bytes: NFC and NFD `café`, and `K`
    /// beside the Kelvin sign (U+212A, which normalizes to `K`).
    static let pairs: [(String, String)] = [("caf\u{E9}", "cafe\u{301}"), ("Kata0", "\u{212A}ata0")]

    @Test("the pairs are one String and two byte sequences; UserID and the index keep them apart", arguments: pairs)
    func twoIdentities(real: String, lookAlike: String) {
        #expect(real == lookAlike, "Swift's String equality is canonical equivalence")
        #expect(Array(real.utf8) != Array(lookAlike.utf8))
        #expect(UserID(real) != UserID(lookAlike))
        #expect(!UserID.sameBytes(real, lookAlike))
        #expect(UserID.sameBytes(real, String(decoding: Array(real.utf8), as: UTF8.self)))
        #expect(Set([UserID(real), UserID(lookAlike), UserID(real)]).count == 2)
        #expect(IdentifierIndex.hash(real) != IdentifierIndex.hash(lookAlike))

        var index = IdentifierIndex()
        let ids = [real, lookAlike]
        index.insert(0, hash: IdentifierIndex.hash(real))
        #expect(index.find(lookAlike, hash: IdentifierIndex.hash(lookAlike)) { ids[Int($0)] } == nil)
        index.insert(1, hash: IdentifierIndex.hash(lookAlike))
        #expect(index.find(real, hash: IdentifierIndex.hash(real)) { ids[Int($0)] } == 0)
        #expect(index.find(lookAlike, hash: IdentifierIndex.hash(lookAlike)) { ids[Int($0)] } == 1)
    }

    /// A Focus that silences every app.
    static func silenceAll(_ userID: String) throws -> CompiledFocusContext {
        var compiler = FocusContextCompiler()
        return try compiler.compile(
            FocusContext(userID: userID, version: 3, focus: "Work", otherApps: .silence))
    }

    @Test(
        "two look-alike users keep their own decisions, badges, history and dedupe in one partition's state",
        arguments: pairs)
    func ownState(real: String, lookAlike: String) throws {
        var state = PartitionState()
        let work = try Self.silenceAll(real)
        func decide(_ userID: String, _ id: String, _ context: CompiledFocusContext?) -> PartitionState.Admission {
            let event = NotificationEvent(id: id, userID: userID, appID: "chat", filterCriteria: "work")
            return state.decide(
                event, lookup: .available(context), defaultRateLimits: .none, repeatedWindowMilliseconds: 0,
                nowMilliseconds: 1_000, sentAtMilliseconds: 1_000
            ).admission
        }
        #expect(decide(lookAlike, "n-1", nil) != .duplicate)
        #expect(decide(real, "n-1", work) != .duplicate, "the look-alike's id does not dedupe the real user's")
        #expect(decide(real, "n-2", work) != .duplicate)
        #expect(decide(lookAlike, "n-1", nil) == .duplicate, "its own id does")
        #expect(state.userCount == 2)

        #expect(state.badges(userID: real).map(\.unread) == [2])
        #expect(state.badges(userID: real).map(\.badge) == [0], "silenced under the real user's Focus")
        #expect(state.badges(userID: lookAlike).map(\.unread) == [1])
        #expect(state.badges(userID: lookAlike).map(\.badge) == [1])

        let realHistory = state.history(userID: real, query: HistoryQuery(limit: 10)).items
        let lookAlikeHistory = state.history(userID: lookAlike, query: HistoryQuery(limit: 10)).items
        #expect(realHistory.map(\.notificationID) == ["n-2", "n-1"])
        #expect(realHistory.allSatisfy { $0.reason == .appSilenced && $0.focus == "Work" })
        #expect(lookAlikeHistory.map(\.notificationID) == ["n-1"])
        #expect(lookAlikeHistory.map(\.reason) == [.noFocus])

        // The look-alike's clear zeroes its own badge only.
        let clear = NotificationEvent(kind: .clear, id: "c-1", userID: lookAlike, appID: "chat")
        _ = state.apply(clear, lookup: .available(nil), nowMilliseconds: 2_000)
        #expect(state.badges(userID: lookAlike).map(\.unread) == [0])
        #expect(state.badges(userID: real).map(\.unread) == [2])
    }
}
