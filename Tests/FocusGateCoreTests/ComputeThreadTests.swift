import FocusGateTestSupport
import Testing

@Suite("Compute-bound tests off the cooperative pool")
struct ComputeThreadTests {
    @Test("a synchronous test marked computeThread runs on the compute-bound tests' thread", .computeThread)
    func runsOnTheComputeThread() {
        #expect(OwnThreadsTrait.onComputeThread)
    }

    @Test("an unmarked test does not")
    func unmarked() {
        #expect(!OwnThreadsTrait.onComputeThread)
    }
}
