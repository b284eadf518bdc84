/// Slots of one kind (entries, apps, users…) whose changes since the last ``commit()`` can be
/// undone in time proportional to them: a slot that existed at the commit keeps a before-image
/// when it is changed through ``modify(_:_:)`` or ``replace(_:with:)``, a slot appended since is
/// simply dropped. This is the state's undo log, one per kind of slot, each image as its own type.
///
/// Writes through the subscript keep no image: they are for what a rollback does not return to
/// on its own (change marks, which the owner clears) and for slots appended since the commit.
///
/// Invariants (``violations``): the committed count is at most the count, and every image is of a
/// slot below it. A slot may have several images (changed, freed and reused since the commit): a
/// rollback restores them newest first, so the oldest, the committed one, is what stays.
struct UndoableArray<Element>: RandomAccessCollection, MutableCollection {
    /// The slots as they are now.
    private(set) var elements: [Element] = []
    /// How many slots there were at the commit.
    private(set) var committedCount = 0
    /// Before-images of slots below ``committedCount``, in the order they were taken.
    private(set) var beforeImages: [(slot: UInt32, element: Element)] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { self.elements.count }
    /// The number of slots (the array's own, not a distance walked through the collection's
    /// generic index arithmetic, which unoptimized builds, the tests', do not specialize).
    var count: Int { self.elements.count }

    /// A slot, read or written without a before-image (see the type's description).
    subscript(position: Int) -> Element {
        @inline(__always) get { self.elements[position] }
        @inline(__always) _modify { yield &self.elements[position] }
    }

    /// Changes a slot, keeping its before-image when it existed at the commit.
    @inline(__always)
    mutating func modify<Result>(_ slot: UInt32, _ body: (inout Element) -> Result) -> Result {
        self.keepImage(of: slot)
        return body(&self.elements[Int(slot)])
    }

    /// Replaces a slot, keeping its before-image when it existed at the commit.
    @inline(__always)
    mutating func replace(_ slot: UInt32, with element: Element) {
        self.keepImage(of: slot)
        self.elements[Int(slot)] = element
    }

    @inline(__always)
    private mutating func keepImage(of slot: UInt32) {
        if Int(slot) < self.committedCount { self.beforeImages.append((slot, self.elements[Int(slot)])) }
    }

    /// Adds a slot at the end; a rollback drops it.
    mutating func append(_ element: Element) {
        self.elements.append(element)
    }

    /// The slots appended since the commit.
    var appendedSinceCommit: ArraySlice<Element> { self.elements[self.committedCount...] }

    /// Makes the slots as they are the committed ones.
    mutating func commit() {
        self.beforeImages.removeAll(keepingCapacity: true)
        self.committedCount = self.elements.count
    }

    /// Puts every slot back as of the commit: the images newest first (each given to `restoring`
    /// with the slot as it is, before it is overwritten), then the slots appended since dropped.
    mutating func rollBack(
        restoring: (_ slot: UInt32, _ current: Element, _ committed: Element) -> Void = { _, _, _ in }
    ) {
        for (slot, image) in self.beforeImages.reversed() {
            restoring(slot, self.elements[Int(slot)], image)
            self.elements[Int(slot)] = image
        }
        self.elements.removeSubrange(self.committedCount...)
        self.beforeImages.removeAll(keepingCapacity: true)
    }

    func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<Element>) throws -> Result) rethrows -> Result {
        try self.elements.withUnsafeBufferPointer(body)
    }

    mutating func withUnsafeMutableBufferPointer<Result>(
        _ body: (inout UnsafeMutableBufferPointer<Element>) throws -> Result
    ) rethrows -> Result {
        try self.elements.withUnsafeMutableBufferPointer(body)
    }

    /// What breaks the invariants (empty when they hold).
    var violations: [String] {
        var found: [String] = []
        if self.committedCount > self.elements.count {
            found.append("committed count \(self.committedCount) above the count \(self.elements.count)")
        }
        for (slot, _) in self.beforeImages where Int(slot) >= self.committedCount {
            found.append("an image of slot \(slot), appended since the commit (\(self.committedCount))")
        }
        return found
    }
}
