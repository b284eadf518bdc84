import Dispatch
import FocusGate
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Waits for SIGINT or SIGTERM.
enum TerminationSignal {
    /// Returns the name of the first termination signal received.
    static func wait() async -> String {
        await withCheckedContinuation { continuation in
            let queue = DispatchQueue(label: "focusgate.signals")
            let state = SignalState(continuation: continuation)
            for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { state.fire(name) }
                source.resume()
                state.retain(source)
            }
        }
    }
}

/// Resumes the waiting task once; touched only on the signal queue.
private final class SignalState: @unchecked Sendable {
    private var continuation: CheckedContinuation<String, Never>?
    private var sources: [any DispatchSourceSignal] = []

    init(continuation: CheckedContinuation<String, Never>) {
        self.continuation = continuation
    }

    func retain(_ source: any DispatchSourceSignal) {
        self.sources.append(source)
    }

    func fire(_ name: String) {
        self.continuation?.resume(returning: name)
        self.continuation = nil
    }
}

/// A stderr logger at `level`, as text lines or JSON objects.
func makeLogger(label: String, level: Logger.Level, json: Bool = false) -> Logger {
    var logger = Logger(label: label) { label -> any LogHandler in
        json ? JSONLogHandler.standardError(label: label) : StreamLogHandler.standardError(label: label)
    }
    logger.logLevel = level
    return logger
}
