public import FocusGateCore
import Foundation

extension ContextInvalidation {
    /// Why an invalidation record was ignored.
    public struct ParseError: Error, Sendable, Hashable {
        public var reason: String
    }

    /// Reads a `focus.invalidations` record (key = userId).
    ///
    /// - `{"userId","version"}` → ``reload(userID:version:)``
    /// - `{"userId","version","context":{…}}` → ``inline(_:)`` (the context's own `userId` and
    ///   `version` must match the envelope's)
    /// - an empty or absent value → ``drop(userID:)`` for the key
    public static func parse(key: [UInt8]?, value: [UInt8]?) throws(ParseError) -> ContextInvalidation {
        let keyText = key.map { String(decoding: $0, as: UTF8.self) }
        guard let value, !value.isEmpty else {
            guard let keyText, !keyText.isEmpty else {
                throw ParseError(reason: "a tombstone needs the user id as key")
            }
            return .drop(userID: keyText)
        }
        struct Envelope: Decodable {
            var userId: String
            var version: Int64
        }
        // The inline context is decoded from the record's own bytes, never through a generic
        // JSON value: its version (an integer up to 2^53 - 1) must arrive exactly as written.
        struct Inline: Decodable {
            var context: FocusContext?
        }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(value)) else {
            throw ParseError(reason: "not {\"userId\": string, \"version\": integer, \"context\"?: object}")
        }
        let userID = envelope.userId
        let version = envelope.version
        guard !userID.isEmpty else { throw ParseError(reason: "userId is required") }
        guard (0...FocusContext.maximumVersion).contains(version) else {
            throw ParseError(reason: "version must be an integer from 0 to 2^53 - 1")
        }
        if let keyText, keyText != userID { throw ParseError(reason: "the key differs from userId") }
        let decoded: FocusContext
        do {
            guard let inline = try FocusContext.jsonDecoder.decode(Inline.self, from: Data(value)).context else {
                return .reload(userID: userID, version: version)
            }
            try inline.validate()
            decoded = inline
        } catch {
            throw ParseError(reason: "the inline context does not validate")
        }
        guard UserID.sameBytes(decoded.userID, userID), decoded.version == version else {
            throw ParseError(reason: "the inline context's userId and version must match the envelope")
        }
        return .inline(decoded)
    }

    /// The record value that announces `context` inline.
    public static func inlineValue(for context: FocusContext) -> [UInt8] {
        let document = context.encoded()
        var value = Array(#"{"userId":"#.utf8)
        value += Array(
            (try? JSONSerialization.data(withJSONObject: context.userID, options: [.fragmentsAllowed])) ?? Data())
        value += Array(#","version":\#(context.version),"context":"#.utf8)
        value += Array(document)
        value.append(UInt8(ascii: "}"))
        return value
    }
}
