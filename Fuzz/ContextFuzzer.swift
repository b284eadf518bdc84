// Fuzz target `context`: any bytes either decode into a valid Focus context (which compiles, and
// encodes to bytes that decode to the same context) or are refused with an error.
import Foundation

func fuzzContext(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let context = try? FocusContext.decode(from: Data(bytes)) else { return }
    var compiler = FocusContextCompiler()
    guard let compiled = try? compiler.compile(context) else { preconditionFailure("a valid context does not compile") }
    // Schedules: the Focus worked out ahead for a horizon is the one computed at each instant.
    let from: Int64 = 1_795_985_940_000
    let ahead = try? compiler.compile(context, horizonFrom: from)
    for step in Int64(0)..<8 {
        let instant = from + step * 21_600_000 + step
        precondition(
            ahead?.inForce(atMilliseconds: instant).focus == compiled.inForce(atMilliseconds: instant).focus,
            "the horizon disagrees with the timeline")
        _ = compiled.status(at: instant)
        _ = compiled.focusState(at: instant)
    }
    let encoded = context.encoded()
    precondition((try? FocusContext.decode(from: encoded)) == context, "encode/decode does not round-trip")
}
