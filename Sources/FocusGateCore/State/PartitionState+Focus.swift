// MARK: - Following a user's Focus: timers, status and summaries as a context meets the user

extension PartitionState {
    /// Follows the Focus of `context` for the user: watches its next transition or summary time
    /// (a timer), notes a changed status and sums up what a Focus that has ended silenced. Called
    /// wherever a context meets the user: decisions, context changes, fired timers.
    ///
    /// `timerAt` is the instant of the user's timer when one fired (a transition or a summary
    /// time): the instant summaries are made at, so that a replay makes the same ones.
    mutating func followFocus(
        user: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64, timerAt: Int64? = nil
    ) {
        self.watchTransition(user: user, at: context?.nextTimer(after: nowMilliseconds))
        self.noteStatus(user: user, context: context, nowMilliseconds: nowMilliseconds)
        self.summarizeSilenced(user: user, context: context, nowMilliseconds: nowMilliseconds, timerAt: timerAt)
        let version = context?.version ?? Self.noContextVersion
        if self.users[Int(user)].followedVersion != version {
            self.modifyUser(user) { $0.followedVersion = version }
        }
    }

    /// ``followFocus(user:context:nowMilliseconds:)`` for a decision: only when the context's
    /// version differs from the one last followed (the record loop's common case is none).
    mutating func followFocusIfChanged(user: UInt32, context: CompiledFocusContext?, nowMilliseconds: Int64) {
        guard self.users[Int(user)].followedVersion != (context?.version ?? Self.noContextVersion) else { return }
        self.followFocus(user: user, context: context, nowMilliseconds: nowMilliseconds)
    }

    /// ``UserSlot/followedVersion`` of a user without a context.
    static let noContextVersion = Int64.min + 1
}
