@testable import FocusGateCore
import FocusGateTestSupport
import Testing

@Suite("Lists threaded through slots (windows and unread lists)")
struct IntrusiveListTests {
    /// Nodes threaded through both kinds of list at once, as entries are: each node in one
    /// owner's window and one owner's unread list, or in neither.
    struct Lists {
        var nodes = UndoableArray<StateEntry>()
        var users = UndoableArray<UserSlot>()
        var apps = UndoableArray<AppSlot>()
        /// The model: each owner's nodes, oldest first.
        var windows: [[UInt32]]
        var unread: [[UInt32]]

        init(owners: Int) {
            for owner in 0..<owners {
                self.users.append(UserSlot())
                self.apps.append(AppSlot(user: UInt32(owner), ordinal: 1))
            }
            self.users.commit()
            self.apps.commit()
            self.windows = Array(repeating: [], count: owners)
            self.unread = Array(repeating: [], count: owners)
        }

        func check(_ step: Int) throws {
            for owner in self.windows.indices {
                let window = Array(WindowList.walk(self.users[owner], nodes: self.nodes))
                try #require(window == self.windows[owner], "step \(step): window \(owner)")
                let unread = Array(UnreadList.walk(self.apps[owner], nodes: self.nodes))
                try #require(unread == self.unread[owner], "step \(step): unread list \(owner)")
                let found =
                    WindowList.violations(of: self.users[owner], named: "window", nodes: self.nodes) {
                        $0.user == UInt32(owner)
                    }
                    + UnreadList.violations(of: self.apps[owner], named: "unread", nodes: self.nodes) {
                        $0.app == UInt32(owner)
                    }
                try #require(found == [], "step \(step)")
            }
        }
    }

    @Test(
        "appended at the tail, leaving at the head or (unread) anywhere, committed and rolled back: each list as a model of arrays says, its invariants after every step",
        .computeThread, arguments: 1...6)
    func againstModel(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let owners = 5
        var lists = Lists(owners: owners)
        var committed = lists
        for step in 0..<4_000 {
            let owner = Int.random(in: 0..<owners, using: &random)
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<8:
                var node = StateEntry.free
                node.user = UInt32(owner)
                node.app = UInt32(owner)
                UnreadList.prepare(&node, toFollow: lists.apps[owner])
                let index = UInt32(lists.nodes.count)
                lists.nodes.append(node)
                WindowList.append(index, to: UInt32(owner), nodes: &lists.nodes, owners: &lists.users)
                UnreadList.append(index, to: UInt32(owner), nodes: &lists.nodes, owners: &lists.apps) {
                    $0.counted += 1
                }
                lists.windows[owner].append(index)
                lists.unread[owner].append(index)
            case 8..<12 where !lists.windows[owner].isEmpty:
                let first = WindowList.removeFirst(of: UInt32(owner), nodes: lists.nodes, owners: &lists.users)
                try #require(first == lists.windows[owner].removeFirst(), "step \(step)")
            case 12..<17 where !lists.unread[owner].isEmpty:
                let index = lists.unread[owner].remove(
                    at: Int.random(in: 0..<lists.unread[owner].count, using: &random))
                UnreadList.unlink(
                    index, removed: lists.nodes[Int(index)], from: UInt32(owner), nodes: &lists.nodes,
                    owners: &lists.apps
                ) { $0.counted -= 1 }
                try #require(lists.apps[owner].counted == UInt32(lists.unread[owner].count), "step \(step)")
            case 17:
                lists.nodes.commit()
                lists.users.commit()
                lists.apps.commit()
                committed = lists
            case 18:
                lists.nodes.rollBack()
                lists.users.rollBack()
                lists.apps.rollBack()
                lists.windows = committed.windows
                lists.unread = committed.unread
            default:
                continue
            }
            try lists.check(step)
        }
    }

    @Test("a list that loops, a count that is off and a tail that is not the last node are each found")
    func brokenFound() {
        var lists = Lists(owners: 1)
        for index in UInt32(0)..<3 {
            var node = StateEntry.free
            node.user = 0
            node.app = 0
            UnreadList.prepare(&node, toFollow: lists.apps[0])
            lists.nodes.append(node)
            WindowList.append(index, to: 0, nodes: &lists.nodes, owners: &lists.users)
            UnreadList.append(index, to: 0, nodes: &lists.nodes, owners: &lists.apps)
        }
        func found(_ lists: Lists) -> [String] {
            WindowList.violations(of: lists.users[0], named: "window", nodes: lists.nodes) { _ in true }
                + UnreadList.violations(of: lists.apps[0], named: "unread", nodes: lists.nodes) { _ in true }
        }
        #expect(found(lists) == [])
        var broken = lists
        broken.nodes[2].windowNext = 0
        #expect(found(broken).contains("window goes round a cycle"))
        broken = lists
        broken.apps[0].unread = 2
        #expect(found(broken).contains("unread is 3 long, counted 2"))
        broken = lists
        broken.users[0].windowTail = 1
        #expect(found(broken).contains("window ends at node 2, its tail is 1"))
        broken = lists
        broken.nodes[1].unreadPrev = StateIndex.none
        #expect(found(broken).contains { $0.contains("links back") })
    }
}
