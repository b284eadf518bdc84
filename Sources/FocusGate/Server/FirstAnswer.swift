import Synchronization

/// The value of `operation`, or `fallback` once `limit` has passed without one (or the caller is
/// cancelled): the caller never waits past the deadline. The side that lost is cancelled and not
/// waited for, so an operation that ignores cancellation costs the caller nothing.
func firstAnswer<Value: Sendable>(
    within limit: Duration, orElse fallback: Value, _ operation: @escaping @Sendable () async -> Value
) async -> Value {
    let race = FirstAnswer<Value>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            race.wait(continuation)
            race.run(Task { race.give(await operation()) })
            race.run(
                Task {
                    try? await Task.sleep(for: limit)
                    race.give(fallback)
                })
        }
    } onCancel: {
        race.give(fallback)
    }
}

/// The first of several answers, given to one waiting continuation; the tasks still running
/// for the others are cancelled then.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, Never>?
        var answer: Value?
        var tasks: [Task<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Waits for the first answer: at once when one came before.
    func wait(_ continuation: CheckedContinuation<Value, Never>) {
        let answer = self.state.withLock { state -> Value? in
            if state.answer == nil { state.continuation = continuation }
            return state.answer
        }
        if let answer { continuation.resume(returning: answer) }
    }

    /// A task racing for the answer: cancelled once the answer is in.
    func run(_ task: Task<Void, Never>) {
        let answered = self.state.withLock { state -> Bool in
            if state.answer == nil { state.tasks.append(task) }
            return state.answer != nil
        }
        if answered { task.cancel() }
    }

    func give(_ value: Value) {
        let taken = self.state.withLock { state -> (CheckedContinuation<Value, Never>?, [Task<Void, Never>])? in
            guard state.answer == nil else { return nil }
            state.answer = value
            defer {
                state.continuation = nil
                state.tasks = []
            }
            return (state.continuation, state.tasks)
        }
        guard let (continuation, tasks) = taken else { return }
        continuation?.resume(returning: value)
        for task in tasks { task.cancel() }
    }
}
