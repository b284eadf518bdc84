@testable import FocusGate
import FocusGateCore
import Testing

/// The marker grouping of records written before the `as-of` header, without a broker: records
/// in the orders a compacted, aborted or rebalanced changelog partition presents them. (The
/// stream below judges headed records by their header; a group ignores it.)
@Suite("Changelog groups: which commits a restore applies")
struct ChangelogGroupTests {
    /// A changelog record, or a commit marker (`key == nil`).
    enum Item {
        case record(key: [UInt8], value: [UInt8]?, asOf: Int64?)
        case marker(Int64)
    }

    /// The records of one commit as of input offset `asOf`: notification `id` for user `u`
    /// (`headed`: with the `as-of` header, as a worker writes them).
    static func commit(_ id: String, asOf: Int64, headed: Bool = true) -> [Item] {
        var state = PartitionState()
        _ = state.apply(
            NotificationEvent(id: id, userID: "u", appID: "chat"), lookup: .available(nil), nowMilliseconds: 0
        )
        var items: [Item] = []
        state.writeChanges { key, value in items.append(.record(key: key, value: value, asOf: headed ? asOf : nil)) }
        return items
    }

    /// Restores `items` as a restore reads them, with the input partition committed at `committed`.
    static func restore(_ items: [Item], committed: Int64) -> (state: PartitionState, group: ChangelogGroup) {
        var state = PartitionState()
        var group = ChangelogGroup()
        for item in items {
            switch item {
            case .record(let key, let value, _):
                key.withUnsafeBytes { key in
                    guard let value else { return group.append(key: key, value: nil) }
                    value.withUnsafeBytes { group.append(key: key, value: $0) }
                }
            case .marker(let through):
                group.close(through: through, committed: committed, to: &state)
            }
        }
        state.finishRestore()
        return (state, group)
    }

    /// The notification ids of user `u` the restored state remembers, among `ids`.
    static func remembered(_ state: PartitionState, _ ids: [String]) -> [String] {
        ids.filter { id in
            var probe = state
            return probe.apply(
                NotificationEvent(id: id, userID: "u", appID: "chat"), lookup: .available(nil), nowMilliseconds: 0
            ).admission
                == .duplicate
        }
    }

    static let ids = ["n-10", "n-20", "n-30"]
    /// Records a commit writes (the entry and its app's name).
    static let perCommit = Self.commit("n", asOf: 0).count

    @Test("commits in order, each closed by its marker, are all applied")
    func inOrder() {
        let items = Self.commit("n-10", asOf: 10) + [.marker(10)] + Self.commit("n-20", asOf: 20) + [.marker(20)]
        let (state, group) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state, Self.ids) == ["n-10", "n-20"])
        #expect(group.skipped == 0 && group.skippedLate == 0 && group.count == 0)
    }

    @Test("compacted: the newest marker alone closes every commit before it")
    func compacted() {
        let items = Self.commit("n-10", asOf: 10) + Self.commit("n-20", asOf: 20) + [.marker(20)]
        #expect(Self.remembered(Self.restore(items, committed: 20).state, Self.ids) == ["n-10", "n-20"])
    }

    @Test(
        "a commit skipped: past the group's offsets (they never committed), or written late behind state applied (a member that lost the partition)",
        arguments: [(first: 10, second: 30, late: false), (first: 20, second: 10, late: true)])
    func skipped(_ order: (first: Int64, second: Int64, late: Bool)) {
        let items =
            Self.commit("n-\(order.first)", asOf: order.first) + [.marker(order.first)]
            + Self.commit("n-\(order.second)", asOf: order.second) + [.marker(order.second)]
        let (state, group) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state, Self.ids) == ["n-\(order.first)"])
        #expect((order.late ? group.skippedLate : group.skipped) == Self.perCommit)
    }

    @Test("records without the as-of header belong to the next marker")
    func unheaded() {
        let items =
            Self.commit("n-10", asOf: 10, headed: false) + [.marker(10)] + Self.commit("n-30", asOf: 30, headed: false)
            + [.marker(30)]
        let (state, group) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state, Self.ids) == ["n-10"])
        #expect(group.skipped == Self.perCommit)
    }

    @Test("records after the last marker (a commit cut short) are not applied")
    func afterLastMarker() {
        let items = Self.commit("n-10", asOf: 10) + [.marker(10)] + Self.commit("n-20", asOf: 20)
        let (state, group) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state, Self.ids) == ["n-10"])
        #expect(group.count == Self.perCommit)
    }
}

/// The same orders through the streaming restore: each record applied as it is read, judged by
/// the partition's closing marker (found first in its tail), nothing buffered but records
/// without the `as-of` header.
@Suite("Changelog stream: which records a streaming restore applies")
struct ChangelogStreamTests {
    typealias Item = ChangelogGroupTests.Item

    /// Restores `items` as ``StateRestorer`` does: the closing marker first (the whole partition
    /// is its tail here), then every record in log order, at its offset (its index).
    static func restore(_ items: [Item], committed: Int64) -> (state: PartitionState, stream: ChangelogStream) {
        var last: Int64?
        var through = Int64.min
        for (offset, item) in items.enumerated() {
            if case .marker(let marker) = item {
                last = Int64(offset)
                through = max(through, marker)
            }
        }
        var stream = ChangelogStream(closing: last.map { ($0, through) }, committed: committed)
        var state = PartitionState()
        for (offset, item) in items.enumerated() {
            let (key, value, asOf): ([UInt8], [UInt8]?, Int64?) =
                switch item {
                case .record(let key, let value, let asOf): (key, value, asOf)
                case .marker(let marker):
                    (PartitionState.commitMarkerKey, PartitionState.commitMarkerValue(through: marker), nil)
                }
            key.withUnsafeBytes { key in
                guard let value else {
                    return stream.take(offset: Int64(offset), key: key, value: nil, asOf: asOf, to: &state)
                }
                value.withUnsafeBytes {
                    stream.take(offset: Int64(offset), key: key, value: $0, asOf: asOf, to: &state)
                }
            }
        }
        state.finishRestore()
        return (state, stream)
    }

    static let ids = ChangelogGroupTests.ids
    static let perCommit = ChangelogGroupTests.perCommit
    static func commit(_ id: String, asOf: Int64, headed: Bool = true) -> [Item] {
        ChangelogGroupTests.commit(id, asOf: asOf, headed: headed)
    }

    static func remembered(_ state: PartitionState) -> [String] {
        ChangelogGroupTests.remembered(state, Self.ids)
    }

    @Test("commits in order are applied as they are read")
    func inOrder() {
        let items = Self.commit("n-10", asOf: 10) + [.marker(10)] + Self.commit("n-20", asOf: 20) + [.marker(20)]
        let (state, stream) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state) == ["n-10", "n-20"])
        #expect(stream.applied == 2 * Self.perCommit && stream.notApplied == 0)
    }

    @Test("compacted: the newest marker alone closes every commit before it, with nothing held back")
    func compacted() {
        let items = Self.commit("n-10", asOf: 10) + Self.commit("n-20", asOf: 20) + [.marker(20)]
        let (state, stream) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state) == ["n-10", "n-20"])
        #expect(stream.legacy.count == 0)
    }

    @Test(
        "a commit skipped: past the group's offsets, or written late behind state applied",
        arguments: [(first: 10, second: 30, late: false), (first: 20, second: 10, late: true)])
    func skipped(_ order: (first: Int64, second: Int64, late: Bool)) {
        let items =
            Self.commit("n-\(order.first)", asOf: order.first) + [.marker(order.first)]
            + Self.commit("n-\(order.second)", asOf: order.second) + [.marker(order.second)]
        let (state, stream) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state) == ["n-\(order.first)"])
        #expect((order.late ? stream.skippedLate : stream.skipped) == Self.perCommit)
    }

    @Test("records of a commit cut short before its marker, then the next writer's commit: never applied")
    func interleaved() {
        let items = Self.commit("n-30", asOf: 30) + Self.commit("n-20", asOf: 20) + [.marker(20)]
        let (state, stream) = Self.restore(items, committed: 30)
        #expect(Self.remembered(state) == ["n-20"])
        #expect(stream.skipped == Self.perCommit)
    }

    @Test("records without the as-of header wait for the next marker, as before the header")
    func unheaded() {
        let items =
            Self.commit("n-10", asOf: 10, headed: false) + [.marker(10)] + Self.commit("n-30", asOf: 30, headed: false)
            + [.marker(30)]
        let (state, stream) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state) == ["n-10"])
        #expect(stream.legacy.skipped == Self.perCommit)
    }

    @Test("records after the last marker (a commit cut short) are not applied")
    func afterLastMarker() {
        let items = Self.commit("n-10", asOf: 10) + [.marker(10)] + Self.commit("n-20", asOf: 20)
        let (state, stream) = Self.restore(items, committed: 20)
        #expect(Self.remembered(state) == ["n-10"])
        #expect(stream.skipped == Self.perCommit)
    }

    @Test("applied as read: a compacted partition's records are in the state before its one marker is reached")
    func appliedAsRead() {
        let records = Self.commit("n-10", asOf: 10) + Self.commit("n-20", asOf: 20)
        var stream = ChangelogStream(closing: (lastMarker: Int64(records.count), through: 20), committed: 20)
        var state = PartitionState()
        for (offset, item) in records.enumerated() {
            guard case .record(let key, let value, let asOf) = item else { continue }
            key.withUnsafeBytes { key in
                value!.withUnsafeBytes {
                    stream.take(offset: Int64(offset), key: key, value: $0, asOf: asOf, to: &state)
                }
            }
        }
        #expect(state.entryCount == 2 && stream.applied == records.count, "nothing waits for the marker")
    }

    @Test("no marker at all: nothing is taken")
    func noMarker() {
        let (state, stream) = Self.restore(Self.commit("n-10", asOf: 10), committed: 20)
        #expect(Self.remembered(state).isEmpty && stream.skipped == Self.perCommit)
    }
}
