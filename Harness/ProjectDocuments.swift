public import Foundation

/// The project's own documents, as the contract tests compare them with the code.
public enum ProjectDocuments {
    /// The repository's root folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// The text of `path`, relative to the repository's root.
    ///
    /// - Throws: When the file cannot be read.
    public static func text(_ path: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The section of a Markdown document under the level-2 heading `heading` (`"Metrics"`), up to
    /// the next level-2 heading; empty when there is none.
    ///
    /// - Throws: When the file cannot be read.
    public static func section(_ heading: String, of path: String = "docs/contract.md") throws -> String {
        let text = try Self.text(path)
        return text.components(separatedBy: "\n## \(heading)\n").dropFirst().first?
            .components(separatedBy: "\n## ").first ?? ""
    }
}
