import Foundation

/// A directory for files that one test or benchmark process writes and no other process reads
/// (SQLite stores, command-line inputs): made under the system's temporary directory, and removed
/// with everything in it by ``remove()``; the process's own, ``process``, when the process exits,
/// however its tests end and whether or not they closed what they opened.
public final class ScratchDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// The process's scratch directory, made on first use and removed at exit.
    public static let process: ScratchDirectory = {
        let directory = ScratchDirectory(prefix: "focusgate-run")
        atexit { ScratchDirectory.process.remove() }
        return directory
    }()

    /// Makes a new directory named `prefix`, the process id and a random suffix.
    public init(prefix: String) {
        self.path = NSTemporaryDirectory() + "\(prefix)-\(getpid())-\(UUID().uuidString.prefix(8))"
        do {
            try FileManager.default.createDirectory(atPath: self.path, withIntermediateDirectories: true)
        } catch {
            // Nothing a test or benchmark can go on without: say where, and stop.
            fatalError("cannot create the scratch directory \(self.path): \(error)")
        }
    }

    /// A path in the directory no other call returns: `name`, a random part, then `extension`.
    public func file(_ name: String, extension fileExtension: String) -> String {
        "\(self.path)/\(name)-\(UUID().uuidString).\(fileExtension)"
    }

    /// A new directory in it, made: `name` and a random part.
    public func directory(_ name: String) throws -> String {
        let path = "\(self.path)/\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes the directory and everything in it. At exit other threads still run: one may be
    /// closing a SQLite store, whose `-wal` and `-shm` files come and go while the directory is
    /// emptied, so that removing the emptied directory fails. The removal is tried again a few
    /// times; `scripts/test.sh` also removes the scratch directories of processes that are gone.
    public func remove() {
        for attempt in 0..<5 {
            try? FileManager.default.removeItem(atPath: self.path)
            guard FileManager.default.fileExists(atPath: self.path) else { return }
            usleep(UInt32(10_000 << attempt))
        }
    }
}
