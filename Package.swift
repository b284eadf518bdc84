// swift-tools-version: 6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// jemalloc as the allocator of the programs that run librdkafka's clients under load (it comes
/// before glibc among their libraries, so librdkafka's allocations are its too): librdkafka
/// allocates each produced message on the producing thread and frees it on its broker thread, and
/// glibc's arenas make those frees wait on a lock the producing thread holds (docs/performance.md,
/// "The allocator"). A choice for each program, not for the libraries a program links.
let jemalloc: [LinkerSetting] = [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]

let package = Package(
    name: "FocusGate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "focusgate", targets: ["focusgate"]),
        .library(name: "FocusGateCore", targets: ["FocusGateCore"]),
        .library(name: "FocusGateKafka", targets: ["FocusGateKafka"]),
        // Preloaded into `focusgate serve` by GatewayBenchmark to count heap allocations per thread.
        .library(name: "MallocCounter", type: .dynamic, targets: ["MallocCounter"]),
    ],
    traits: [
        .trait(
            name: "PostgreSQL",
            description: """
                The PostgreSQL context store (store.kind: postgres), through postgres-nio and with it \
                swift-nio-ssl and swift-crypto (two copies of BoringSSL): most of a clean build's time. \
                `make run` (embedded broker and SQLite) builds without it.
                """),
        .default(enabledTraits: ["PostgreSQL"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/vapor/sqlite-nio", exact: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        // Without its default ConfigurationSupport trait: FocusGate reads its own configuration,
        // and swift-configuration would be built for nothing.
        .package(
            url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // Already built for Hummingbird: its HTTP types' channel parts, for the admin channel's guards.
        .package(url: "https://github.com/apple/swift-nio-extras", exact: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-collections", exact: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", exact: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", exact: "1.8.1"),
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
        // Threads of their own for blocking work (consume loops, commits, store loads): for the
        // pipeline, the context cache, the benchmarks and the tests.
        .target(
            name: "FocusGateThreads",
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
        // librdkafka's mock cluster as a broker, with fault injection: for `focusgate broker`,
        // `serve` with no bootstrap servers (make run), the tests and the benchmarks; never the
        // pipeline's code.
        .target(
            name: "FocusGateEmbeddedBroker",
            dependencies: [
                "Crdkafka", "FocusGateKafka",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "FocusGateStore",
            dependencies: [
                "FocusGateCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["PostgreSQL"])),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "FocusGate",
            dependencies: [
                "FocusGateCore",
                "FocusGateKafka",
                "FocusGateStore",
                "FocusGateThreads",
                .product(name: "Hummingbird", package: "hummingbird"),
                // The admin API asks its peers (Admin/PeerInstances.swift) over NIO's HTTP/1.1.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Yams", package: "Yams"),
            ],
            // docs/openapi.yaml (through a link in Admin/), compiled into the binary and served.
            resources: [.embedInCode("Admin/openapi.yaml")],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "focusgate",
            dependencies: [
                "FocusGate",
                "FocusGateCore",
                "FocusGateKafka",
                "FocusGateEmbeddedBroker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift,
            linkerSettings: jemalloc
        ),

        // MARK: - Harness: real child processes and waits, for the tests, benchmarks and soak run
        .target(
            name: "FocusGateHarness",
            dependencies: [
                "FocusGateCore",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Harness",
            swiftSettings: strictSwift
        ),

        // MARK: - Benchmarks
        .target(name: "MallocCounter", path: "Benchmarks/MallocCounter"),
        .target(name: "BenchmarkSupport", path: "Benchmarks/BenchmarkSupport", swiftSettings: strictSwift),
        .executableTarget(
            name: "KafkaPipeBenchmark",
            dependencies: ["FocusGateKafka", "FocusGateEmbeddedBroker", "Crdkafka"],
            path: "Benchmarks/KafkaPipeBenchmark",
            swiftSettings: strictSwift,
            linkerSettings: jemalloc
        ),

        .executableTarget(
            name: "CoreBenchmark",
            dependencies: ["FocusGateCore", "BenchmarkSupport"],
            path: "Benchmarks/CoreBenchmark",
            swiftSettings: strictSwift
        ),

        .executableTarget(
            name: "ContextBenchmark",
            dependencies: [
                "FocusGate", "FocusGateCore", "FocusGateKafka", "FocusGateEmbeddedBroker", "FocusGateStore",
                "FocusGateThreads", "FocusGateHarness", "BenchmarkSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/ContextBenchmark",
            swiftSettings: strictSwift
        ),

        .executableTarget(
            name: "GatewayBenchmark",
            dependencies: [
                "FocusGate", "FocusGateCore", "FocusGateKafka", "FocusGateEmbeddedBroker", "FocusGateStore",
                "FocusGateHarness", "BenchmarkSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/GatewayBenchmark",
            swiftSettings: strictSwift,
            linkerSettings: jemalloc
        ),

        .executableTarget(
            name: "Soak",
            dependencies: [
                "FocusGate", "FocusGateCore", "FocusGateKafka", "FocusGateEmbeddedBroker", "FocusGateStore",
                "FocusGateThreads", "FocusGateHarness",
            ],
            path: "Benchmarks/Soak",
            swiftSettings: strictSwift
        ),

        // MARK: - Tests
        // Test traits the test targets share (which threads a test runs on).
        .target(
            name: "FocusGateTestSupport",
            dependencies: ["FocusGateThreads"],
            path: "Tests/Support",
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "FocusGateCoreTests",
            dependencies: ["FocusGateCore", "FocusGateHarness", "FocusGateTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "FocusGateStoreTests",
            dependencies: ["FocusGateStore", "FocusGateCore", "FocusGateHarness"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "FocusGateKafkaTests",
            dependencies: ["FocusGateKafka", "FocusGateEmbeddedBroker", "FocusGateCore", "FocusGateHarness"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "FocusGateThreadsTests",
            dependencies: ["FocusGateThreads", "FocusGateTestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "FocusGateTests",
            dependencies: [
                "FocusGate", "FocusGateKafka", "FocusGateEmbeddedBroker", "FocusGateCore", "FocusGateStore",
                "FocusGateThreads", "FocusGateHarness", "FocusGateTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "FocusGate", "FocusGateCore", "FocusGateKafka", "FocusGateEmbeddedBroker", "FocusGateStore",
                "FocusGateThreads", "FocusGateHarness", "FocusGateTestSupport",
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSwift
        ),
    ],
    swiftLanguageModes: [.v6]
)
