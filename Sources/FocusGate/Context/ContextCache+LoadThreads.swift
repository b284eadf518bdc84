import FocusGateThreads
import Foundation

extension ContextCache {
    /// The threads that store loads run on, one per core as the cooperative pool would have: a
    /// load never waits for that pool, which blocking code elsewhere in the process can hold, so
    /// a worker's miss is answered from the store within ``Configuration/loadTimeout`` whatever
    /// the pool is doing. What a load does between its awaits (decoding the rows) runs here.
    static let loadThreads = ThreadsExecutor(
        threads: ProcessInfo.processInfo.activeProcessorCount, name: "focusgate-context-loads")
}
