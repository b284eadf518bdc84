import Glibc

/// The wall clock as Unix milliseconds: decision time, context expiry, `focusgate-decided-at`.
///
/// The gateway reads it through ``GatewayConfiguration/clock``, so that a test can move time (a
/// context's expiry, for instance) instead of waiting for it.
public protocol WallClock: Sendable {
    /// Now, in milliseconds since the Unix epoch.
    func nowMilliseconds() -> Int64
}

/// The system's real-time clock (`CLOCK_REALTIME`).
public struct SystemWallClock: WallClock {
    public init() {}

    public func nowMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
