import Glibc

/// The wall clock as Unix milliseconds: decision time, context expiry, `focusgate-decided-at`.
enum WallClock {
    static func nowMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
