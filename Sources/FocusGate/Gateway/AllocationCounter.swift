#if canImport(Glibc)
    import Glibc
#endif

/// The calling thread's heap allocations, when the process runs with the benchmarks' allocation
/// counter preloaded (`LD_PRELOAD=libMallocCounter.so`, as GatewayBenchmark starts `serve`);
/// otherwise nothing is counted and nothing is looked up per call.
enum AllocationCounter {
    private typealias Reader = @convention(c) () -> UInt64

    private static let reader: Reader? = {
        guard let symbol = dlsym(nil, "focusgate_thread_allocations") else { return nil }
        return unsafeBitCast(symbol, to: Reader.self)
    }()

    /// Whether the counter is preloaded.
    static var isLoaded: Bool { self.reader != nil }

    /// Allocations the calling thread has made; `0` when the counter is not preloaded.
    static func threadAllocations() -> UInt64 {
        self.reader?() ?? 0
    }
}
