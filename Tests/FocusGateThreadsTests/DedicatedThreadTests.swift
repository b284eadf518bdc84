import FocusGateThreads
import Foundation
import Testing

@Suite("Dedicated threads")
struct DedicatedThreadTests {
    @Test(
        "a thread carries its name where top -H and perf read it: a short one whole, a long one's first 15 bytes in whole characters"
    )
    func kernelNames() async throws {
        for (name, shown) in [
            ("fg-worker-3", "fg-worker-3"), ("a-very-long-thread-name", "a-very-long-thr"),
            ("fokus-gäte-wörker", "fokus-gäte-wö"),
        ] {
            let comm = try await DedicatedThread.run(name: name) { () throws -> String in
                try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
                    .trimmingCharacters(in: .newlines)
            }
            #expect(comm == shown, "\(name)")
            #expect(DedicatedThread.kernelName(name) == shown)
        }
    }
}
