internal import Crdkafka

/// Builds an `rd_kafka_conf_t` from string properties, naming the property librdkafka refuses.
enum RDKafkaConfig {
    /// Creates a configuration object. The caller owns it until `rd_kafka_new` succeeds.
    static func make(_ properties: [(String, String)]) throws(KafkaError) -> OpaquePointer {
        let conf = rd_kafka_conf_new()!
        var errorText = [CChar](repeating: 0, count: 512)
        for (name, value) in properties {
            let result = rd_kafka_conf_set(conf, name, value, &errorText, errorText.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                throw KafkaError.configuration(property: name, message: String(cErrorBuffer: errorText))
            }
        }
        return conf
    }
}

/// Merges typed settings with pass-through properties; a pass-through property wins.
func mergedProperties(typed: [(String, String)], passThrough: [String: String]) -> [(String, String)] {
    let overridden = Set(passThrough.keys)
    return typed.filter { !overridden.contains($0.0) }
        + passThrough.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
}
