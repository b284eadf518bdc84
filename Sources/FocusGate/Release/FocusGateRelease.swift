import FocusGateKafka

/// This build of FocusGate: the one place its version is written. CHANGELOG.md's newest release,
/// the image's label and the manifests' image tag are checked against it (`ReleaseTests`).
public enum FocusGateRelease {
    /// The release version, in semantic versioning.
    public static let version = "0.1.0"

    /// The librdkafka the process runs with (the dynamic linker's choice, not the one built against).
    public static var librdkafkaVersion: String { RDKafkaLibrary.version }

    /// What `focusgate --version` prints: `0.1.0 (librdkafka 2.0.2)`.
    public static var description: String { "\(Self.version) (librdkafka \(Self.librdkafkaVersion))" }
}
