import Foundation

/// Runs blocking work (a consume loop, a transaction commit, a flush) on a thread of its own, so
/// that it never occupies Swift's cooperative thread pool.
public enum DedicatedThread {
    /// Runs `body` on a new thread and returns its result.
    ///
    /// - Parameters:
    ///   - name: The thread's name, shown by debuggers, `top -H`, `perf` and
    ///     `/proc/<pid>/task/*/comm`: its first 15 bytes (``kernelName(_:)``).
    ///   - body: The blocking work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func run<Result: Sendable>(
        name: String,
        _ body: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let kernelName = Self.kernelName(name)
            let thread = Thread {
                Self.nameCurrentThread(kernelName)
                continuation.resume(with: Swift.Result { try body() })
            }
            thread.name = name
            thread.start()
        }
    }

    /// Names the calling thread for the kernel, as glibc's `pthread_setname_np` does for a thread
    /// other than the caller: by writing its `comm` file. Foundation keeps `Thread.name` to itself
    /// on Linux, and the GNU function is not in Swift's Glibc module.
    private static func nameCurrentThread(_ name: String) {
        let file = open("/proc/thread-self/comm", O_WRONLY)
        guard file >= 0 else { return }
        defer { close(file) }
        var name = name
        name.withUTF8 { _ = write(file, $0.baseAddress, $0.count) }
    }

    /// The first 15 bytes of `name` (whole characters): as much of a thread's name as Linux
    /// keeps. A longer name is refused whole (`pthread_setname_np` fails with `ERANGE`), and the
    /// thread would go on showing its creator's name.
    public static func kernelName(_ name: String) -> String {
        var end = name.startIndex
        var bytes = 0
        for character in name {
            bytes += character.utf8.count
            guard bytes <= 15 else { break }
            end = name.index(after: end)
        }
        return String(name[..<end])
    }
}
