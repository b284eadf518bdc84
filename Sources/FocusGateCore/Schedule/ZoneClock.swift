public import Foundation

// MARK: - Local wall-clock time in an IANA zone

/// Converts between instants (Unix milliseconds) and a zone's local wall-clock time, with the
/// rules schedules follow across daylight-saving changes (docs/focus-schedules.md): a local time
/// that does not exist (in a spring-forward gap) happens at the first instant after the gap; a
/// local time that happens twice (in a fall-back overlap) happens at its first occurrence.
public struct ZoneClock: Sendable, Hashable {
    /// Milliseconds in a day.
    public static let dayMilliseconds: Int64 = 86_400_000

    /// The IANA zone.
    public let zone: TimeZone

    /// The clock of the IANA zone `identifier` (`Europe/Paris`); `nil` for a zone the system's
    /// time zone database does not know.
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.zone = zone
    }

    /// The zone's offset from UTC at `instant`, in milliseconds.
    public func offset(at instant: Int64) -> Int64 {
        Int64(self.zone.secondsFromGMT(for: Self.date(instant))) * 1_000
    }

    /// Local wall-clock milliseconds since 1970-01-01T00:00 local at `instant`.
    public func local(_ instant: Int64) -> Int64 {
        instant + self.offset(at: instant)
    }

    /// The local day (days since 1970-01-01 in the zone) that `instant` falls on.
    public func day(of instant: Int64) -> Int64 {
        Self.floorDivide(self.local(instant), Self.dayMilliseconds)
    }

    /// The instant at which local wall-clock time `local` happens: its first occurrence when the
    /// clock shows it twice, the first instant after the gap when the clock skips it.
    public func instant(ofLocal local: Int64) -> Int64 {
        // Offsets a day either side: a zone changes its offset at most once in between.
        let before = self.offset(at: local - Self.dayMilliseconds)
        let after = self.offset(at: local + Self.dayMilliseconds)
        var first: Int64?
        for offset in before == after ? [before] : [before, after] {
            let candidate = local - offset
            if self.offset(at: candidate) == offset { first = min(first ?? candidate, candidate) }
        }
        if let first { return first }
        // Skipped: the change itself is the first instant after the gap. It lies after the
        // instant the local time would have with the later offset.
        if let change = self.zone.nextDaylightSavingTimeTransition(after: Self.date(local - after - 1)) {
            return Int64((change.timeIntervalSince1970 * 1_000).rounded())
        }
        return local - before
    }

    /// The weekday of a local day: `0` Monday … `6` Sunday (1970-01-01 was a Thursday).
    public static func weekday(ofDay day: Int64) -> Int {
        Int((day % 7 + 7 + 3) % 7)
    }

    static func date(_ instant: Int64) -> Date {
        Date(timeIntervalSince1970: Double(instant) / 1_000)
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
