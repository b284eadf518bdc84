@testable import FocusGate
import Testing

/// How long a worker pauses before replaying after aborts in a row (``ReplayBackoff``).
@Suite("Replay backoff")
struct ReplayBackoffTests {
    @Test("the first abort replays at once, then the pause doubles from the initial one up to the maximum")
    func doubles() {
        var backoff = ReplayBackoff(initial: .milliseconds(100), maximum: .seconds(1))
        let pauses = (0..<7).map { _ in backoff.aborted() }
        #expect(
            pauses == [
                .zero, .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
                .seconds(1),
            ])
        #expect(backoff.abortsInARow == 7)
    }

    @Test("a commit or a rebalance ends the run: the next abort replays at once")
    func commitResets() {
        var backoff = ReplayBackoff(initial: .milliseconds(100), maximum: .seconds(10))
        _ = backoff.aborted()
        #expect(backoff.aborted() == .milliseconds(100))
        backoff.reset()
        #expect(backoff.aborted() == .zero)
        #expect(backoff.aborted() == .milliseconds(100))
    }

    @Test("a long run stays at the maximum; zero never pauses; a maximum under the initial pause is the initial one")
    func bounds() {
        var long = ReplayBackoff(initial: .milliseconds(100), maximum: .seconds(10))
        for _ in 0..<1_000 { _ = long.aborted() }
        #expect(long.aborted() == .seconds(10))
        var never = ReplayBackoff(initial: .zero, maximum: .seconds(10))
        #expect((0..<5).map { _ in never.aborted() } == Array(repeating: .zero, count: 5))
        var inverted = ReplayBackoff(initial: .milliseconds(500), maximum: .milliseconds(100))
        _ = inverted.aborted()
        #expect(inverted.aborted() == .milliseconds(500) && inverted.aborted() == .milliseconds(500))
    }
}
