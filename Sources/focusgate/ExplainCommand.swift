import ArgumentParser
import FocusGateCore
import Foundation

/// `focusgate explain`: the decision for one event under one context, as JSON.
struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain the decision for a notification event under a Focus context.",
        discussion: """
            Prints {"decision", "reason", "focus", "contextVersion", "senderList", "rateLimit", "badgeCounted",
            "badgeUpdates", "focusState"} and exits 0. focusState says which Focus is on at that instant and why
            (manual, schedule, expiry, none), since when and its next transition. Rate limits are the context's
            (`rateLimits`); the flags say what the gateway's state would hold.
            An unreadable context or event is reported on standard error with exit status 2.
            """
    )

    @Option(help: "The user's Focus context document (JSON). Without it the user has no context.")
    var context: String?

    @Option(help: "The notification event (JSON), as produced to the notifications topic.")
    var event: String

    @Option(help: "Decide at this instant (RFC 3339), for expiry and schedules. Default: now.")
    var at: String?

    @Flag(help: "The sender sent this user another notification within the repeated-sender window.")
    var repeatedSender = false

    @Option(help: "Deliveries already counted in the user's rate-limit window. Default: 0.")
    var deliveredToUser = 0

    @Option(help: "Deliveries already counted in the (user, app)'s rate-limit window. Default: 0.")
    var deliveredFromApp = 0

    func run() throws {
        do {
            let eventBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: self.event)))
            let event = try EventDecoder().decode(eventBytes)
            guard event.kind == .notification else {
                throw ExplainFailure("the event is a \(event.kind.rawValue) event; only notifications are decided")
            }
            let context = try self.context.map {
                try FocusContext.decode(from: Data(contentsOf: URL(fileURLWithPath: $0)))
            }
            guard self.deliveredToUser >= 0, self.deliveredFromApp >= 0 else {
                throw ExplainFailure("--delivered-to-user and --delivered-from-app must not be negative")
            }
            let explanation = try DecisionExplanation(
                event: event, context: context, nowMilliseconds: try self.now(),
                recent: .init(
                    repeatedSender: self.repeatedSender, deliveredToUser: self.deliveredToUser,
                    deliveredFromApp: self.deliveredFromApp))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(explanation), as: UTF8.self))
        } catch let error as EventDecodingError {
            printError("event: \(error)")
            throw ExitCode(2)
        } catch let error as FocusContextError {
            printError("context: \(error)")
            throw ExitCode(2)
        } catch let error as ExplainFailure {
            printError(error.message)
            throw ExitCode(2)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile || error.code == .fileReadUnknown {
            printError("cannot read: \(error.localizedDescription)")
            throw ExitCode(2)
        }
    }

    private func now() throws -> Int64 {
        guard let at = self.at else { return Int64(Date().timeIntervalSince1970 * 1000) }
        guard let milliseconds = Timestamp.parseRFC3339(at) else {
            throw ExplainFailure("--at must be an RFC 3339 timestamp such as 2026-11-21T18:00:00Z")
        }
        return milliseconds
    }
}

private struct ExplainFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
