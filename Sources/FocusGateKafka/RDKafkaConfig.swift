internal import Crdkafka

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif

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

/// Merges typed settings with pass-through properties; a pass-through property wins. A
/// pass-through property that librdkafka defines for the other kind of client only is left out,
/// so that one set of properties can be given to consumers and producers alike without
/// librdkafka's "is a consumer property and will be ignored by this producer instance" warnings.
func mergedProperties(
    typed: [(String, String)], passThrough: [String: String], for role: RDKafkaPropertyScope.Role
) -> [(String, String)] {
    let overridden = Set(passThrough.keys)
    return typed.filter { !overridden.contains($0.0) }
        + passThrough.filter { RDKafkaPropertyScope.applies($0.key, to: role) }
        .sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
}

/// Which kind of client each librdkafka property is for, as the linked librdkafka itself lists
/// them (`rd_kafka_conf_properties_show`: the `C/P` column), read once.
public enum RDKafkaPropertyScope {
    /// A kind of client.
    public enum Role: Sendable {
        case consumer, producer
    }

    /// Whether `property` is for `role`: true for a property of both kinds, of that kind, or one
    /// the library does not list (librdkafka then names it in its own error).
    public static func applies(_ property: String, to role: Role) -> Bool {
        switch table[property] {
        case "C": role == .consumer
        case "P": role == .producer
        default: true
        }
    }

    /// Property name → `C`, `P` or `*`, from the library's own table.
    static let table: [String: String] = {
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return [:] }
        rd_kafka_conf_properties_show(stream)
        fclose(stream)
        guard let buffer else { return [:] }
        defer { free(buffer) }
        var table: [String: String] = [:]
        for line in String(cString: buffer).split(separator: "\n") {
            let columns = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard columns.count == 3 else { continue }
            let name = columns[0].trimmingSpaces
            let scope = columns[1].trimmingSpaces
            guard ["C", "P", "*"].contains(scope), !name.isEmpty, !name.contains(" ") else { continue }
            table[name] = scope
        }
        return table
    }()
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
