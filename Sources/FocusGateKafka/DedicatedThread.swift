import Foundation

/// Runs blocking work (a consume loop, a transaction commit, a flush) on a thread of its own, so
/// that it never occupies Swift's cooperative thread pool.
public enum DedicatedThread {
    /// Runs `body` on a new thread and returns its result.
    ///
    /// - Parameters:
    ///   - name: The thread's name, shown by debuggers and `top -H`.
    ///   - body: The blocking work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func run<Result: Sendable>(
        name: String,
        _ body: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Swift.Result { try body() })
            }
            thread.name = name
            thread.start()
        }
    }
}
