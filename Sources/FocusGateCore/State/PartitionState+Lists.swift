// MARK: - The lists threaded through the slots, and their invariants

extension PartitionState {
    /// What breaks the invariants of the lists threaded through the slots (empty when they hold):
    /// each user's window (oldest first through `windowNext`, `windowCount` long, ending at its
    /// tail, every entry alive, in the window and the user's), each app's unread list (through
    /// `unreadNext`, each entry linked back through `unreadPrev`, `unread` long, ending at its tail,
    /// every entry alive, unread and the app's), and each user's apps (through `nextApp`, each
    /// alive and the user's). Walks the whole state: for tests.
    var listViolations: [String] {
        var found: [String] = []
        for (number, user) in self.users.enumerated() where !user.isFree {
            found += WindowList.violations(of: user, named: "user \(number)'s window", nodes: self.entries) {
                $0.has(StateEntry.alive) && $0.has(StateEntry.inWindow) && $0.user == UInt32(number)
            }
            found += AppList.violations(of: user, named: "user \(number)'s apps", nodes: self.apps) {
                $0.has(AppSlot.alive) && $0.user == UInt32(number)
            }
        }
        for (number, app) in self.apps.enumerated() where app.has(AppSlot.alive) {
            found += UnreadList.violations(of: app, named: "app \(number)'s unread list", nodes: self.entries) {
                $0.has(StateEntry.alive) && $0.has(StateEntry.unread) && $0.app == UInt32(number)
            }
        }
        return found
    }
}
