@testable import FocusGate
import Testing

/// When a worker commits (``CommitSchedule``): every interval, and early enough that the first
/// record after a commit is committed about one interval after it was produced.
@Suite("Commit schedule")
struct CommitScheduleTests {
    static let start = ContinuousClock.now
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { Self.start + .milliseconds(milliseconds) }

    @Test("with no records, a commit is due one interval after the last one ended")
    func idle() {
        var schedule = CommitSchedule(interval: .milliseconds(250), now: Self.at(0))
        #expect(schedule.due == Self.at(250))
        schedule.committed(started: Self.at(250), ended: Self.at(260))
        #expect(schedule.due == Self.at(510))
    }

    @Test("the first record after a commit brings it forward by the record's age and the commits' duration")
    func earlyForFirstRecord() {
        var schedule = CommitSchedule(interval: .milliseconds(250), now: Self.at(0))
        for cycle in 0..<16 {  // commits of 12 ms each: the average approaches 12 ms
            let start = 250 * cycle
            schedule.committed(started: Self.at(start), ended: Self.at(start + 12))
        }
        let ended = 250 * 15 + 12
        #expect(schedule.commitDuration > .milliseconds(11) && schedule.commitDuration <= .milliseconds(12))
        // A record produced 3 ms before it was taken, 5 ms after the commit: due so that the
        // next commit, taking about as long, ends 250 ms after the record was produced (not 250 ms
        // after the last commit, which would be later).
        schedule.recordsTaken(at: Self.at(ended + 5), age: .milliseconds(3))
        let expected = Self.at(ended + 5 + 250 - 3) - schedule.commitDuration
        #expect(expected < Self.at(ended + 250))
        #expect(schedule.due == expected)
        // Later records do not move it.
        schedule.recordsTaken(at: Self.at(ended + 100), age: .zero)
        #expect(schedule.due == expected)
    }

    @Test(
        "a worker that keeps up: a record that waited through a long commit brings the next forward by up to half the interval"
    )
    func keepingUp() {
        var schedule = CommitSchedule(interval: .milliseconds(250), now: Self.at(0))
        for cycle in 0..<16 {  // commits of 60 ms each, the loop waiting for records 100 ms between them
            let start = 250 * cycle
            schedule.waited(.milliseconds(100))
            schedule.committed(started: Self.at(start), ended: Self.at(start + 60))
        }
        let duration = schedule.commitDuration
        #expect(schedule.keepsUp && duration > .milliseconds(59) && duration <= .milliseconds(60))
        // Produced as the last commit began, taken as it ended: the next is due so that it ends
        // about 250 ms after the record was produced, 120 ms early (a tenth would be 25 ms).
        let ended = 250 * 15 + 60
        schedule.recordsTaken(at: Self.at(ended), age: .milliseconds(60))
        #expect(schedule.due == Self.at(ended + 250 - 60) - duration)
        // Older still (but younger than an interval): half the interval at most.
        schedule.waited(.milliseconds(25))
        schedule.committed(started: Self.at(4_000), ended: Self.at(4_060))
        schedule.recordsTaken(at: Self.at(4_060), age: .milliseconds(200))
        #expect(schedule.due == Self.at(4_060 + 250 - 125))
    }

    @Test(
        "a saturated worker: young records, but a loop that did not wait for them, bring it forward by a tenth at most")
    func saturated() {
        var schedule = CommitSchedule(interval: .milliseconds(250), now: Self.at(0))
        for cycle in 0..<16 {
            let start = 250 * cycle
            schedule.waited(.milliseconds(24))  // less than a tenth of the interval in all
            schedule.committed(started: Self.at(start), ended: Self.at(start + 60))
        }
        #expect(!schedule.keepsUp)
        let ended = 250 * 15 + 60
        schedule.recordsTaken(at: Self.at(ended), age: .milliseconds(60))
        #expect(schedule.due == Self.at(ended + 250 - 25))
    }

    @Test("a backlog: old records and long commits bring it forward by a tenth of the interval at most")
    func bounded() {
        var schedule = CommitSchedule(interval: .milliseconds(250), now: Self.at(0))
        schedule.waited(.milliseconds(100))
        schedule.committed(started: Self.at(0), ended: Self.at(400))  // a slow commit
        schedule.recordsTaken(at: Self.at(400), age: .seconds(3600))  // a backlog
        #expect(schedule.due == Self.at(400 + 250 - 25))
        schedule.waited(.milliseconds(100))
        schedule.committed(started: Self.at(700), ended: Self.at(800))
        schedule.recordsTaken(at: Self.at(800), age: .milliseconds(250))  // an interval old: behind
        #expect(schedule.due == Self.at(800 + 250 - 25))
        // A record from a clock ahead of this one (negative age) counts as new.
        schedule.waited(.milliseconds(100))
        schedule.committed(started: Self.at(1_100), ended: Self.at(1_101))
        let duration = schedule.commitDuration
        schedule.recordsTaken(at: Self.at(1_101), age: .milliseconds(-5000))
        #expect(schedule.due == Self.at(1_101 + 250) - duration)
    }

    @Test(
        "stages: a quarter interval after the commit or the last stage, none within an eighth of the commit; none with one stage"
    )
    func stages() {
        var schedule = CommitSchedule(interval: .milliseconds(400), stages: 4, now: Self.at(0))
        #expect(!schedule.isStageDue(at: Self.at(99)))
        #expect(schedule.isStageDue(at: Self.at(100)))
        schedule.staged(at: Self.at(110))
        #expect(!schedule.isStageDue(at: Self.at(209)) && schedule.isStageDue(at: Self.at(210)))
        schedule.staged(at: Self.at(320))
        // The next would be at 420, past the commit due at 400.
        #expect(!schedule.isStageDue(at: Self.at(399)))
        schedule.committed(started: Self.at(400), ended: Self.at(440))
        #expect(schedule.isStageDue(at: Self.at(540)))
        #expect(!schedule.isStageDue(at: Self.at(800)), "the commit, due at 840, is within half a stage")
        let single = CommitSchedule(interval: .milliseconds(400), now: Self.at(0))
        #expect(!single.isStageDue(at: Self.at(200)))
    }
}
