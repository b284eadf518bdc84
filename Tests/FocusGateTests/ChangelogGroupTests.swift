@testable import FocusGate
import FocusGateCore
import Testing

/// The marker and `as-of` grouping of a restore, without a broker: records in the orders a
/// compacted, aborted or rebalanced changelog partition presents them.
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
        _ = state.admit(NotificationEvent(id: id, userID: "u", appID: "chat"), context: nil, nowMilliseconds: 0)
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
            case .record(let key, let value, let asOf):
                key.withUnsafeBytes { key in
                    guard let value else { return group.append(key: key, value: nil, asOf: asOf) }
                    value.withUnsafeBytes { group.append(key: key, value: $0, asOf: asOf) }
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
            return probe.admit(NotificationEvent(id: id, userID: "u", appID: "chat"), context: nil, nowMilliseconds: 0)
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

    @Test("records of a commit cut short before its marker, then the next writer's commit: kept waiting, never applied")
    func interleaved() {
        let items = Self.commit("n-30", asOf: 30) + Self.commit("n-20", asOf: 20) + [.marker(20)]
        let (state, group) = Self.restore(items, committed: 30)
        #expect(Self.remembered(state, Self.ids) == ["n-20"])
        #expect(
            group.interleaved == Self.perCommit && group.count == Self.perCommit,
            "the as-of-30 records still wait for their marker")
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
