import Crdkafka

/// The librdkafka this process runs with (which one the dynamic linker found: Debian 12's
/// 2.0.2, or the 2.8 that `make test-compat` builds, both `librdkafka.so.1`).
public enum RDKafkaLibrary {
    /// Its version as it reports it (`rd_kafka_version_str`), e.g. `2.0.2`.
    public static var version: String {
        String(cString: rd_kafka_version_str())
    }
}
