// swift-tools-version: 6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "FocusGate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "focusgate", targets: ["focusgate"]),
        .library(name: "FocusGateCore", targets: ["FocusGateCore"]),
        .library(name: "FocusGateKafka", targets: ["FocusGateKafka"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
    ],
    targets: [
        // MARK: - C
        .systemLibrary(
            name: "Crdkafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),

        // MARK: - Modules
        .target(
            name: "FocusGateCore",
            swiftSettings: strictSwift
        ),
        .target(
            name: "FocusGateKafka",
            dependencies: [
                "Crdkafka",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "FocusGate",
            dependencies: ["FocusGateCore", "FocusGateKafka"],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "focusgate",
            dependencies: [
                "FocusGate",
                "FocusGateCore",
                "FocusGateKafka",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),

        // MARK: - Benchmarks
        .executableTarget(
            name: "KafkaPipeBenchmark",
            dependencies: ["FocusGateKafka", "Crdkafka"],
            path: "Benchmarks/KafkaPipeBenchmark",
            swiftSettings: strictSwift
        ),

        .executableTarget(
            name: "CoreBenchmark",
            dependencies: ["FocusGateCore"],
            path: "Benchmarks/CoreBenchmark",
            swiftSettings: strictSwift
        ),

        // MARK: - Tests
        .testTarget(
            name: "FocusGateCoreTests",
            dependencies: ["FocusGateCore"],
            exclude: ["Fixtures"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "FocusGateKafkaTests",
            dependencies: ["FocusGateKafka"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "FocusGateTests",
            dependencies: ["FocusGate", "FocusGateKafka"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["FocusGateKafka"],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
