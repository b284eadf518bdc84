import ArgumentParser
import FocusGate
import Foundation

/// `focusgate history`: a user's recent decisions, from a running instance's admin API.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show how a user's recent notifications were decided, from a running instance.",
        discussion: """
            Asks the admin API of a running `focusgate serve` (any instance of the group answers for any
            user) and prints its JSON answer: with an id, that notification
            (GET /v1/users/{userId}/notifications/{notificationId}); without, the user's remembered
            notifications, newest first (GET /v1/users/{userId}/notifications). Exit status 0 on an
            answer, 1 when the instance answers with an error (printed on standard error, with its
            code: notification-unknown, notification-not-remembered, owner-unavailable, …), 2 when
            it cannot be reached. The token is read from FOCUSGATE_ADMIN_TOKEN when --token is not given.
            """
    )

    @Argument(help: "The user id.")
    var user: String

    @Argument(help: "A notification id: that notification alone.")
    var id: String?

    @Option(help: "The instance's admin API.")
    var admin = "http://127.0.0.1:8080"

    @Option(help: "The admin.token of the instance, when it has one.")
    var token: String?

    @Option(help: "At most this many notifications (1–1000). Default: 50.")
    var limit: Int?

    @Option(help: "The nextCursor of a previous answer: the page after it.")
    var cursor: String?

    @Option(help: "Only this app's notifications.")
    var app: String?

    @Option(help: "Only delivered or only silenced notifications.")
    var decision: String?

    func run() async throws {
        guard let url = URL(string: self.admin), url.scheme == "http", let host = url.host else {
            printError("--admin must be an http:// URL, e.g. http://127.0.0.1:8080")
            throw ExitCode(2)
        }
        let client = AdminClient(
            token: self.token ?? ProcessInfo.processInfo.environment["FOCUSGATE_ADMIN_TOKEN"],
            timeout: .seconds(10))
        let answer: AdminClient.Answer
        do {
            answer = try await client.get(self.path, host: host, port: url.port ?? 80)
        } catch {
            printError("cannot reach \(self.admin): \(error)")
            throw ExitCode(2)
        }
        let text = String(decoding: answer.body, as: UTF8.self)
        guard answer.status == 200 else {
            printError("HTTP \(answer.status): \(text)")
            throw ExitCode(1)
        }
        print(text)
    }

    /// The request path with its query, each part percent-encoded.
    var path: String {
        var path = "/v1/users/\(Self.segment(self.user))/notifications"
        if let id = self.id { return path + "/\(Self.segment(id))" }
        let query = [
            ("limit", self.limit.map(String.init)), ("cursor", self.cursor), ("appId", self.app),
            ("decision", self.decision),
        ].compactMap { name, value in value.map { "\(name)=\(Self.segment($0))" } }
        if !query.isEmpty { path += "?" + query.joined(separator: "&") }
        return path
    }

    private static func segment(_ text: String) -> String {
        let allowed = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
