// Fuzz target `event`: the event decoder must turn any bytes into an event or a stable error code.
// Input: first byte = key length.

func fuzzEventDecoder(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let first = bytes.first else { return }
    let keyLength = min(Int(first), bytes.count - 1)
    let key = Array(bytes[1..<(1 + keyLength)])
    let value = Array(bytes[(1 + keyLength)...])
    let decoder = EventDecoder(maxEventBytes: 65_536)
    do {
        let event = try decoder.decode(value, key: keyLength == 0 ? nil : key)
        precondition(!event.id.isEmpty && event.id.utf8.count <= EventDecoder.maxIdentifierBytes, "id out of bounds")
        precondition(!event.userID.isEmpty && !event.appID.isEmpty, "required field empty")
        if keyLength > 0 { precondition(Array(event.userID.utf8) == key, "key mismatch accepted") }
        if let score = event.relevanceScore { precondition(score >= 0 && score <= 1, "score not clamped") }
    } catch {
        precondition(EventDecodingError.Code.all.contains(error.code), "unknown error code \(error.code)")
    }
}
