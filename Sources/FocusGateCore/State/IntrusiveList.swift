// MARK: - Lists threaded through slots by index

/// Which field of a node links it forward, in one kind of list threaded through slots by index
/// (``StateIndex/none``: the end).
protocol ForwardLinks {
    associatedtype Node
    static func next(_ node: Node) -> UInt32
    static func setNext(_ node: inout Node, _ next: UInt32)
}

/// Which fields thread one kind of list through slots by index: the nodes' forward links, and
/// the owner's oldest and newest node and length.
protocol ListLinks: ForwardLinks {
    associatedtype Owner
    static func head(_ owner: Owner) -> UInt32
    static func tail(_ owner: Owner) -> UInt32
    static func count(_ owner: Owner) -> UInt32
    static func setEnds(_ owner: inout Owner, head: UInt32, tail: UInt32, count: UInt32)
    /// The node's backward link, in a list that has them (for the invariants).
    static func backLink(_ node: Node) -> UInt32?
}

extension ListLinks {
    static func backLink(_ node: Node) -> UInt32? { nil }
}

/// A list whose nodes also link back, so that any node can leave it.
protocol DoublyLinked: ListLinks {
    static func previous(_ node: Node) -> UInt32
    static func setPrevious(_ node: inout Node, _ previous: UInt32)
}

extension DoublyLinked {
    static func backLink(_ node: Node) -> UInt32? { Self.previous(node) }
}

/// The operations of a list threaded through the slots of an ``UndoableArray`` of nodes and
/// owned by a slot of another (each user's dedupe window, each app's unread list): appended at
/// the tail, left at the head or (doubly linked) anywhere. Every write goes through the arrays'
/// `modify`, so a rollback returns each list as it was at the commit; an owner's other fields can
/// change in the same before-image (`also`).
///
/// Invariants (``violations(of:nodes:owners:belongs:)``): walking from the head through the
/// forward links reaches the tail after exactly `count` nodes, each a node that belongs to the
/// owner; a doubly linked node's backward link is the node before it.
enum IntrusiveList<Links: ListLinks> {
    /// Links `node` at the tail of `owner`'s list: a node in no list of this kind, whose forward
    /// link is the end (and, doubly linked, whose backward link is the tail already: see
    /// ``DoublyLinked``'s `prepare`).
    @inline(__always)
    static func append(
        _ node: UInt32, to owner: UInt32, nodes: inout UndoableArray<Links.Node>,
        owners: inout UndoableArray<Links.Owner>, also: (inout Links.Owner) -> Void = { _ in }
    ) {
        let tail = Links.tail(owners[Int(owner)])
        if tail != StateIndex.none { nodes.modify(tail) { Links.setNext(&$0, node) } }
        owners.modify(owner) { slot in
            let head = Links.head(slot)
            Links.setEnds(
                &slot, head: head == StateIndex.none ? node : head, tail: node, count: Links.count(slot) + 1)
            also(&slot)
        }
    }

    /// Unlinks `owner`'s oldest node from the list and returns it (its own forward link is left
    /// for the caller, which decides what the node becomes).
    @inline(__always)
    static func removeFirst(
        of owner: UInt32, nodes: UndoableArray<Links.Node>, owners: inout UndoableArray<Links.Owner>
    ) -> UInt32 {
        owners.modify(owner) { slot in
            let first = Links.head(slot)
            let next = Links.next(nodes[Int(first)])
            Links.setEnds(
                &slot, head: next, tail: next == StateIndex.none ? StateIndex.none : Links.tail(slot),
                count: Links.count(slot) - 1)
            return first
        }
    }

    /// A walk along `owner`'s list, oldest first.
    @inline(__always)
    static func walk(_ owner: Links.Owner) -> ListCursor<Links> {
        ListCursor(from: Links.head(owner))
    }

    /// What breaks the invariants of `owner`'s list (empty when they hold), each sentence starting
    /// with `name`: a walk longer than the nodes has gone round a cycle.
    static func violations(
        of owner: Links.Owner, named name: String, nodes: UndoableArray<Links.Node>, belongs: (Links.Node) -> Bool
    ) -> [String] {
        var found: [String] = []
        var length = 0
        var last = StateIndex.none
        var node = Links.head(owner)
        while node != StateIndex.none && length <= nodes.count {
            if !belongs(nodes[Int(node)]) { found.append("\(name) holds node \(node), not one of its own") }
            if let back = Links.backLink(nodes[Int(node)]), back != last {
                found.append("\(name)'s node \(node) links back to \(back), not \(last)")
            }
            length += 1
            last = node
            node = Links.next(nodes[Int(node)])
        }
        if length > nodes.count { found.append("\(name) goes round a cycle") }
        if length != Int(Links.count(owner)) {
            found.append("\(name) is \(length) long, counted \(Links.count(owner))")
        }
        if last != Links.tail(owner) { found.append("\(name) ends at node \(last), its tail is \(Links.tail(owner))") }
        return found
    }
}

extension IntrusiveList where Links: DoublyLinked {
    /// Makes a node ready for ``append(_:to:nodes:owners:also:)`` at `owner`'s tail, before it is
    /// stored: no forward link, its backward link the tail.
    @inline(__always)
    static func prepare(_ node: inout Links.Node, toFollow owner: Links.Owner) {
        Links.setNext(&node, StateIndex.none)
        Links.setPrevious(&node, Links.tail(owner))
    }

    /// Unlinks `node` (`removed`: the node as it is) from `owner`'s list, wherever it is; the
    /// node's own links are left for the caller.
    @inline(__always)
    static func unlink(
        _ node: UInt32, removed: Links.Node, from owner: UInt32, nodes: inout UndoableArray<Links.Node>,
        owners: inout UndoableArray<Links.Owner>, also: (inout Links.Owner) -> Void = { _ in }
    ) {
        let previous = Links.previous(removed)
        let next = Links.next(removed)
        if previous != StateIndex.none { nodes.modify(previous) { Links.setNext(&$0, next) } }
        if next != StateIndex.none { nodes.modify(next) { Links.setPrevious(&$0, previous) } }
        owners.modify(owner) { slot in
            let head = Links.head(slot)
            let tail = Links.tail(slot)
            Links.setEnds(
                &slot, head: head == node ? next : head, tail: tail == node ? previous : tail,
                count: Links.count(slot) - 1)
            also(&slot)
        }
    }
}

/// Which fields thread a list that grows at its head and has no tail or length (each user's
/// apps): the nodes' forward links and the owner's newest node.
protocol StackLinks: ForwardLinks {
    associatedtype Owner
    static func head(_ owner: Owner) -> UInt32
    static func setHead(_ owner: inout Owner, _ head: UInt32)
}

/// The operations of a list that grows at its head, threaded through the slots of an
/// ``UndoableArray`` of nodes and owned by a slot of another: pushed at the head, unlinked
/// anywhere (a walk to the node before it: these lists are short), walked newest first. Every
/// write goes through the arrays' `modify`, as ``IntrusiveList``'s do.
///
/// Invariants (``violations(of:named:nodes:belongs:)``): walking from the head ends, and reaches
/// only nodes that belong to the owner.
enum IntrusiveStack<Links: StackLinks> {
    /// Makes a node ready for ``push(_:to:owners:also:)`` onto `owner`'s list, before it is
    /// stored: its forward link the owner's head.
    @inline(__always)
    static func prepare(_ node: inout Links.Node, toPrecede owner: Links.Owner) {
        Links.setNext(&node, Links.head(owner))
    }

    /// Makes `node`, stored and prepared, the head of `owner`'s list.
    @inline(__always)
    static func push(
        _ node: UInt32, to owner: UInt32, owners: inout UndoableArray<Links.Owner>,
        also: (inout Links.Owner) -> Void = { _ in }
    ) {
        owners.modify(owner) { slot in
            Links.setHead(&slot, node)
            also(&slot)
        }
    }

    /// Unlinks `node` (`removed`: the node as it is) from `owner`'s list, wherever it is; the
    /// node's own link is left for the caller.
    static func unlink(
        _ node: UInt32, removed: Links.Node, from owner: UInt32, nodes: inout UndoableArray<Links.Node>,
        owners: inout UndoableArray<Links.Owner>
    ) {
        let next = Links.next(removed)
        var previous = Links.head(owners[Int(owner)])
        if previous == node {
            owners.modify(owner) { Links.setHead(&$0, next) }
            return
        }
        while Links.next(nodes[Int(previous)]) != node { previous = Links.next(nodes[Int(previous)]) }
        nodes.modify(previous) { Links.setNext(&$0, next) }
    }

    /// A walk along `owner`'s list, newest first.
    @inline(__always)
    static func walk(_ owner: Links.Owner) -> ListCursor<Links> {
        ListCursor(from: Links.head(owner))
    }

    /// What breaks the invariants of `owner`'s list (empty when they hold), each sentence starting
    /// with `name`: a walk longer than the nodes has gone round a cycle.
    static func violations(
        of owner: Links.Owner, named name: String, nodes: UndoableArray<Links.Node>, belongs: (Links.Node) -> Bool
    ) -> [String] {
        var found: [String] = []
        var length = 0
        var node = Links.head(owner)
        while node != StateIndex.none && length <= nodes.count {
            if !belongs(nodes[Int(node)]) { found.append("\(name) holds node \(node), not one of its own") }
            length += 1
            node = Links.next(nodes[Int(node)])
        }
        if length > nodes.count { found.append("\(name) goes round a cycle") }
        return found
    }
}

/// A walk along one list that keeps no copy of its nodes (a copy would make the walk's body's
/// first write to them copy them all): `while let node = walk.next(in: nodes) { … }`. A node's
/// forward link is read as the node is handed out, so the body may change or unlink that node.
struct ListCursor<Links: ForwardLinks> {
    private var upcoming: UInt32

    @inline(__always)
    init(from head: UInt32) {
        self.upcoming = head
    }

    @inline(__always)
    mutating func next(in nodes: UndoableArray<Links.Node>) -> UInt32? {
        guard self.upcoming != StateIndex.none else { return nil }
        let node = self.upcoming
        self.upcoming = Links.next(nodes[Int(node)])
        return node
    }
}

// MARK: - The state's lists

/// Each user's dedupe window: its entries oldest first, through `windowNext`.
enum WindowLinks: ListLinks {
    static func next(_ node: StateEntry) -> UInt32 { node.windowNext }
    static func setNext(_ node: inout StateEntry, _ next: UInt32) { node.windowNext = next }
    static func head(_ owner: UserSlot) -> UInt32 { owner.windowHead }
    static func tail(_ owner: UserSlot) -> UInt32 { owner.windowTail }
    static func count(_ owner: UserSlot) -> UInt32 { owner.windowCount }
    static func setEnds(_ owner: inout UserSlot, head: UInt32, tail: UInt32, count: UInt32) {
        owner.windowHead = head
        owner.windowTail = tail
        owner.windowCount = count
    }
}

/// Each app's unread list: its unread entries oldest first, through `unreadNext` and back
/// through `unreadPrev`.
enum UnreadLinks: DoublyLinked {
    static func next(_ node: StateEntry) -> UInt32 { node.unreadNext }
    static func setNext(_ node: inout StateEntry, _ next: UInt32) { node.unreadNext = next }
    static func previous(_ node: StateEntry) -> UInt32 { node.unreadPrev }
    static func setPrevious(_ node: inout StateEntry, _ previous: UInt32) { node.unreadPrev = previous }
    static func head(_ owner: AppSlot) -> UInt32 { owner.unreadHead }
    static func tail(_ owner: AppSlot) -> UInt32 { owner.unreadTail }
    static func count(_ owner: AppSlot) -> UInt32 { owner.unread }
    static func setEnds(_ owner: inout AppSlot, head: UInt32, tail: UInt32, count: UInt32) {
        owner.unreadHead = head
        owner.unreadTail = tail
        owner.unread = count
    }
}

/// Each user's apps: newest first, through `nextApp`.
enum AppLinks: StackLinks {
    static func next(_ node: AppSlot) -> UInt32 { node.nextApp }
    static func setNext(_ node: inout AppSlot, _ next: UInt32) { node.nextApp = next }
    static func head(_ owner: UserSlot) -> UInt32 { owner.firstApp }
    static func setHead(_ owner: inout UserSlot, _ head: UInt32) { owner.firstApp = head }
}

typealias WindowList = IntrusiveList<WindowLinks>
typealias UnreadList = IntrusiveList<UnreadLinks>
typealias AppList = IntrusiveStack<AppLinks>
