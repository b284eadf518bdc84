import FocusGateCore
import Foundation
public import Logging
import Synchronization

/// A swift-log handler that writes one JSON object per line (`log.format: json`):
/// `{"ts","level","logger","msg","source", …metadata}`, metadata keys as given
/// (`focusgate.user`, `kafka.partition`). Messages and metadata never carry payload bodies: the
/// code that logs passes ids, codes and counts only.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: @Sendable (String) -> Void

    /// A handler writing to standard error.
    public static func standardError(label: String) -> JSONLogHandler {
        JSONLogHandler(label: label) { line in
            standardErrorLock.withLock { _ in
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
        }
    }

    /// A handler passing each line to `sink` (tests).
    public init(label: String, sink: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [
            "ts": Timestamp.rfc3339(milliseconds: SystemWallClock().nowMilliseconds()),
            "level": event.level.rawValue,
            "logger": self.label,
            "msg": event.message.description,
            "source": event.source,
        ]
        var merged = self.metadata
        if let provided = self.metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let metadata = event.metadata { merged.merge(metadata) { $1 } }
        for (key, value) in merged where object[key] == nil {
            object[key] = Self.json(value)
        }
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        self.sink(String(decoding: data, as: UTF8.self))
    }

    private static func json(_ value: Logger.MetadataValue) -> Any {
        switch value {
        case .string(let string): return string
        case .stringConvertible(let convertible): return convertible.description
        case .array(let array): return array.map(Self.json)
        case .dictionary(let dictionary): return dictionary.mapValues(Self.json)
        }
    }
}

private let standardErrorLock = Mutex(())
