public import Foundation

/// The Python tools the tests run (schemathesis, and Python with jsonschema), from the virtual
/// environment that `scripts/install-deps.sh --test` (`make test`) makes under `.build/venv`,
/// never from the system's Python.
public enum PythonTools {
    /// The virtual environment's folder.
    public static let environment = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/venv")

    /// A failure to find a tool, naming the command that installs it.
    public struct Missing: Error, CustomStringConvertible {
        public var path: String
        public var description: String {
            "\(self.path) is missing: run `make test` or `scripts/install-deps.sh --test`, which install the Python tools there"
        }
    }

    /// The path of `name` (e.g. `schemathesis`, `python3`) in the virtual environment.
    ///
    /// - Throws: ``Missing`` when the virtual environment lacks it.
    public static func path(_ name: String) throws -> String {
        let path = Self.environment.appendingPathComponent("bin/\(name)").path
        guard FileManager.default.isExecutableFile(atPath: path) else { throw Missing(path: path) }
        return path
    }
}
