@testable import FocusGateCore
import FocusGateTestSupport
import Testing

@Suite("Lists threaded through slots (windows, unread lists, a user's apps)")
struct IntrusiveListTests {
    /// Nodes threaded through both kinds of list at once, as entries are: each node in one
    /// owner's window and one owner's unread list, or in neither; and app slots pushed onto their
    /// user's apps (a list that grows at its head), as a user's apps are.
    struct Lists {
        var nodes = UndoableArray<StateEntry>()
        var users = UndoableArray<UserSlot>()
        var apps = UndoableArray<AppSlot>()
        var stacked = UndoableArray<AppSlot>()
        /// The model: each owner's nodes, oldest first (a user's apps: newest first).
        var windows: [[UInt32]]
        var unread: [[UInt32]]
        var stacks: [[UInt32]]

        init(owners: Int) {
            for owner in 0..<owners {
                self.users.append(UserSlot())
                self.apps.append(AppSlot(user: UInt32(owner), ordinal: 1))
            }
            self.users.commit()
            self.apps.commit()
            self.windows = Array(repeating: [], count: owners)
            self.unread = Array(repeating: [], count: owners)
            self.stacks = Array(repeating: [], count: owners)
        }

        func check(_ step: Int) throws {
            for owner in self.windows.indices {
                let window = walked(WindowList.walk(self.users[owner]), self.nodes)
                try #require(window == self.windows[owner], "step \(step): window \(owner)")
                let unread = walked(UnreadList.walk(self.apps[owner]), self.nodes)
                try #require(unread == self.unread[owner], "step \(step): unread list \(owner)")
                let stack = walked(AppList.walk(self.users[owner]), self.stacked)
                try #require(stack == self.stacks[owner], "step \(step): apps \(owner)")
                let found =
                    WindowList.violations(of: self.users[owner], named: "window", nodes: self.nodes) {
                        $0.user == UInt32(owner)
                    }
                    + UnreadList.violations(of: self.apps[owner], named: "unread", nodes: self.nodes) {
                        $0.app == UInt32(owner)
                    }
                    + AppList.violations(of: self.users[owner], named: "apps", nodes: self.stacked) {
                        $0.user == UInt32(owner)
                    }
                try #require(found == [], "step \(step)")
            }
        }
    }

    /// The nodes a walk hands out, in order.
    static func walked<Links: ForwardLinks>(_ walk: ListCursor<Links>, _ nodes: UndoableArray<Links.Node>) -> [UInt32] {
        var walk = walk
        var found: [UInt32] = []
        while let node = walk.next(in: nodes), found.count <= nodes.count { found.append(node) }
        return found
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
            switch Int.random(in: 0..<24, using: &random) {
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
                lists.stacked.commit()
                committed = lists
            case 18:
                lists.nodes.rollBack()
                lists.users.rollBack()
                lists.apps.rollBack()
                lists.stacked.rollBack()
                lists.windows = committed.windows
                lists.unread = committed.unread
                lists.stacks = committed.stacks
            case 19..<21:
                var node = AppSlot(user: UInt32(owner), ordinal: UInt32(lists.stacked.count))
                AppList.prepare(&node, toPrecede: lists.users[owner])
                let index = UInt32(lists.stacked.count)
                lists.stacked.append(node)
                AppList.push(index, to: UInt32(owner), owners: &lists.users) { $0.nextOrdinal += 1 }
                lists.stacks[owner].insert(index, at: 0)
            case 21..<23 where !lists.stacks[owner].isEmpty:
                let index = lists.stacks[owner].remove(
                    at: Int.random(in: 0..<lists.stacks[owner].count, using: &random))
                AppList.unlink(
                    index, removed: lists.stacked[Int(index)], from: UInt32(owner), nodes: &lists.stacked,
                    owners: &lists.users)
            default:
                continue
            }
            try lists.check(step)
        }
    }

    @Test(
        "a list that loops, a count that is off, a tail that is not the last node and a node of another owner are each found"
    )
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

        for index in UInt32(0)..<3 {
            var node = AppSlot(user: 0, ordinal: index)
            AppList.prepare(&node, toPrecede: lists.users[0])
            lists.stacked.append(node)
            AppList.push(index, to: 0, owners: &lists.users)
        }
        func foundApps(_ lists: Lists) -> [String] {
            AppList.violations(of: lists.users[0], named: "apps", nodes: lists.stacked) { $0.user == 0 }
        }
        #expect(foundApps(lists) == [])
        broken = lists
        broken.stacked[0].nextApp = 2
        #expect(foundApps(broken).contains("apps goes round a cycle"))
        broken = lists
        broken.stacked[1].user = 7
        #expect(foundApps(broken).contains("apps holds node 1, not one of its own"))
    }
}
