// libFuzzer target: any bytes either decode into a valid Focus context (which compiles, and
// encodes to bytes that decode to the same context) or are refused with an error.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContext(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: count))
    guard let context = try? FocusContext.decode(from: bytes) else { return 0 }
    var compiler = FocusContextCompiler()
    precondition((try? compiler.compile(context)) != nil, "a valid context does not compile")
    let encoded = context.encoded()
    precondition((try? FocusContext.decode(from: encoded)) == context, "encode/decode does not round-trip")
    return 0
}
