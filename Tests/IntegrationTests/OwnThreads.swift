import FocusGateKafka
import FocusGateTestSupport
import FocusGateThreads
import Testing

extension EmbeddedBrokerTests {
    @Suite("Broker tests on threads of their own")
    struct OwnThreadsTests {
        /// Whether the caller runs on a test's own threads (a synchronous call: async code cannot ask).
        static func onOwnThreads() -> Bool { ThreadsExecutor.isCurrent(name: "test") }

        @Test("a broker test and its child tasks run on its own threads, not on the cooperative pool")
        func ownThreads() async {
            await Task.yield()  // a suspension: the task resumes on its executor
            #expect(Self.onOwnThreads(), "after a suspension")
            async let child = Self.onOwnThreads()
            #expect(await child, "a child task")
        }
    }
}
