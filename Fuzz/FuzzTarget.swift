// The libFuzzer entry point of the one fuzzing binary that scripts/fuzz.sh builds with the
// FocusGateCore sources: FOCUSGATE_FUZZ_TARGET (event, predicate or context) picks the target.
import Foundation

enum FuzzTarget: String {
    case event, predicate, context

    /// Read once, before the first input.
    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["FOCUSGATE_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("FOCUSGATE_FUZZ_TARGET must be event, predicate or context (got '\(name)')")
        }
        return target
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    switch FuzzTarget.selected {
    case .event: fuzzEventDecoder(bytes)
    case .predicate: fuzzPredicate(bytes)
    case .context: fuzzContext(bytes)
    }
    return 0
}
