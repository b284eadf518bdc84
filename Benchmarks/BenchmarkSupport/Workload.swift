import Foundation

/// Draws 0..<count with probability proportional to 1 / (rank + 1)^exponent.
public struct Zipf {
    private let cumulative: [Double]

    public init(count: Int, exponent: Double) {
        var sum = 0.0
        self.cumulative = (0..<count).map { rank in
            sum += 1 / pow(Double(rank + 1), exponent)
            return sum
        }
    }

    public func sample(_ random: inout SplitMix) -> Int {
        let target = Double(random.next() >> 11) / Double(1 << 53) * self.cumulative.last!
        var low = 0
        var high = self.cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if self.cumulative[middle] < target { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// SplitMix64: a small, fast, deterministic generator, so that workloads repeat exactly.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
