// Fuzz target `context`: any bytes either decode into a valid Focus context (which compiles, and
// encodes to bytes that decode to the same context) or are refused with an error.
import Foundation

func fuzzContext(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let context = try? FocusContext.decode(from: Data(bytes)) else { return }
    var compiler = FocusContextCompiler()
    precondition((try? compiler.compile(context)) != nil, "a valid context does not compile")
    let encoded = context.encoded()
    precondition((try? FocusContext.decode(from: encoded)) == context, "encode/decode does not round-trip")
}
