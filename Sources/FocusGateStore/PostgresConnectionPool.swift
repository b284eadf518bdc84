#if PostgreSQL
    import Logging
    import NIOCore
    import PostgresNIO
    import Synchronization

    /// A small pool of PostgreSQL connections that fails fast and recovers at once.
    ///
    /// postgres-nio's `PostgresClient` backs off between connection attempts after an outage (a query
    /// waited over a minute to fail and recovery took longer than that in our outage test), which a
    /// gateway deciding every notification cannot afford. This pool opens a connection on demand
    /// (bounded by ``maximumConnections``, with the configured connect timeout), returns healthy
    /// connections to the idle list, and closes any connection whose query failed, so the next call
    /// connects anew: failures surface in milliseconds and the first call after the server returns
    /// succeeds.
    final class PostgresConnectionPool: Sendable {
        private struct State {
            var idle: [PostgresConnection] = []
            var open = 0
            /// Calls waiting for a connection, in arrival order, each with its ticket.
            var waiters: [(ticket: Int, continuation: CheckedContinuation<Void, any Error>)] = []
            var nextID = 0
            var nextTicket = 0
            var isClosed = false
        }

        private let configuration: PostgresConnection.Configuration
        private let maximumConnections: Int
        private let state = Mutex(State())
        private let logger: Logger

        init(configuration: PostgresConnection.Configuration, maximumConnections: Int, logger: Logger) {
            self.configuration = configuration
            self.maximumConnections = maximumConnections
            self.logger = logger
        }

        /// Runs `body` with a connection; a connection whose use failed is closed, not reused.
        func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
            let connection = try await self.lease()
            do {
                let result = try await body(connection)
                self.release(connection, healthy: true)
                return result
            } catch {
                self.release(connection, healthy: false)
                throw error
            }
        }

        deinit {
            // postgres-nio requires a connection to be closed before it is released: keep each one
            // alive in its close callback until the close has happened.
            for connection in self.state.withLock({ $0.idle }) {
                connection.close().whenComplete { _ in _ = connection }
            }
        }

        /// Closes idle connections; connections in use close when released.
        func close() async {
            let idle = self.state.withLock { state in
                state.isClosed = true
                defer { state.idle.removeAll() }
                return state.idle
            }
            for connection in idle { try? await connection.close() }
        }

        private func lease() async throws -> PostgresConnection {
            while true {
                enum Next { case reuse(PostgresConnection), open(Int), wait }
                let next = self.state.withLock { state -> Next in
                    if let connection = state.idle.popLast() { return .reuse(connection) }
                    if state.open < self.maximumConnections {
                        state.open += 1
                        state.nextID += 1
                        return .open(state.nextID)
                    }
                    return .wait
                }
                switch next {
                case .reuse(let connection):
                    if !connection.isClosed { return connection }
                    self.state.withLock { $0.open -= 1 }
                case .open(let id):
                    do {
                        return try await PostgresConnection.connect(
                            configuration: self.configuration, id: id, logger: self.logger)
                    } catch {
                        self.freeSlot()
                        throw error
                    }
                case .wait:
                    try await self.waitForConnection()
                }
            }
        }

        /// Waits until a connection is idle or may be opened; a cancelled call stops waiting at once
        /// and throws `CancellationError`.
        private func waitForConnection() async throws {
            let ticket = self.state.withLock { state in
                state.nextTicket += 1
                return state.nextTicket
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    enum Now { case wait, go, cancelled }
                    let now = self.state.withLock { state -> Now in
                        if Task.isCancelled { return .cancelled }
                        if !state.idle.isEmpty || state.open < self.maximumConnections { return .go }
                        state.waiters.append((ticket, continuation))
                        return .wait
                    }
                    switch now {
                    case .wait: break
                    case .go: continuation.resume()
                    case .cancelled: continuation.resume(throwing: CancellationError())
                    }
                }
            } onCancel: {
                let waiter = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let index = state.waiters.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume(throwing: CancellationError())
            }
        }

        private func release(_ connection: PostgresConnection, healthy: Bool) {
            let keep = healthy && !connection.isClosed
            let waiter = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if keep && !state.isClosed {
                    state.idle.append(connection)
                } else {
                    state.open -= 1
                }
                return state.waiters.isEmpty ? nil : state.waiters.removeFirst().continuation
            }
            if !keep || self.state.withLock({ $0.isClosed }) {
                Task { try? await connection.close() }
            }
            waiter?.resume()
        }

        private func freeSlot() {
            let waiter = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
                state.open -= 1
                return state.waiters.isEmpty ? nil : state.waiters.removeFirst().continuation
            }
            waiter?.resume()
        }
    }
#endif
