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
        // A walk longer than this has gone round a cycle.
        let longest = self.entries.count + 1
        for (number, user) in self.users.enumerated() where !user.isFree {
            var length = 0
            var last = StateIndex.none
            var entry = user.windowHead
            while entry != StateIndex.none && length < longest {
                let slot = self.entries[Int(entry)]
                if !slot.has(StateEntry.alive) || !slot.has(StateEntry.inWindow) || slot.user != UInt32(number) {
                    found.append("user \(number)'s window holds entry \(entry), not one of its own in the window")
                }
                length += 1
                last = entry
                entry = slot.windowNext
            }
            if length != Int(user.windowCount) {
                found.append("user \(number)'s window is \(length) long, counted \(user.windowCount)")
            }
            if last != user.windowTail {
                found.append("user \(number)'s window ends at entry \(last), its tail is \(user.windowTail)")
            }
            var app = user.firstApp
            var apps = 0
            while app != StateIndex.none && apps <= self.apps.count {
                let slot = self.apps[Int(app)]
                if !slot.has(AppSlot.alive) || slot.user != UInt32(number) {
                    found.append("user \(number)'s apps hold app \(app), not an alive one of its own")
                }
                apps += 1
                app = slot.nextApp
            }
            if apps > self.apps.count { found.append("user \(number)'s apps go round a cycle") }
        }
        for (number, app) in self.apps.enumerated() where app.has(AppSlot.alive) {
            var length = 0
            var previous = StateIndex.none
            var entry = app.unreadHead
            while entry != StateIndex.none && length < longest {
                let slot = self.entries[Int(entry)]
                if !slot.has(StateEntry.alive) || !slot.has(StateEntry.unread) || slot.app != UInt32(number) {
                    found.append("app \(number)'s unread list holds entry \(entry), not an unread one of its own")
                }
                if slot.unreadPrev != previous {
                    found.append(
                        "app \(number)'s unread entry \(entry) links back to \(slot.unreadPrev), not \(previous)")
                }
                length += 1
                previous = entry
                entry = slot.unreadNext
            }
            if length != Int(app.unread) {
                found.append("app \(number)'s unread list is \(length) long, counted \(app.unread)")
            }
            if previous != app.unreadTail {
                found.append("app \(number)'s unread list ends at entry \(previous), its tail is \(app.unreadTail)")
            }
        }
        return found
    }
}
