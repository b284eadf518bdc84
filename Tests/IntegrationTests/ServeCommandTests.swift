import FocusGate
import FocusGateKafka
import FocusGateEmbeddedBroker
import FocusGateHarness
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EmbeddedBrokerTests {
    /// `focusgate serve` as `make run` starts it: embedded broker, SQLite, admin API.
    @Suite("focusgate serve")
    struct ServeCommandTests {
        private func get(_ url: String, method: String = "GET", body: String? = nil) async throws -> (Int, String) {
            var request = URLRequest(url: URL(string: url)!)
            request.httpMethod = method
            request.httpBody = body.map { Data($0.utf8) }
            if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }

        @Test(
            "serves the admin API over the embedded broker and SQLite; PUT publishes; SIGTERM stops it cleanly; a default start logs no warning"
        )
        func serves() async throws {
            let kafkaPort = KafkaTestSupport.freePort()
            let adminPort = KafkaTestSupport.freePort()
            let database = ScratchDirectory.process.file("serve", extension: "sqlite")
            let logPath = ScratchDirectory.process.file("serve", extension: "log")
            let process = try await RunningProcess(
                ServeProcess.siblingExecutable.path, ["serve"],
                environment: [
                    "FOCUSGATE_KAFKA_EMBEDDED_PORT": "\(kafkaPort)",
                    "FOCUSGATE_ADMIN_PORT": "\(adminPort)",
                    "FOCUSGATE_STORE_SQLITE_PATH": database,
                ], errorPath: logPath)
            defer {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
                try? FileManager.default.removeItem(atPath: logPath)
            }
            let admin = "http://127.0.0.1:\(adminPort)"
            try await Wait.until("/readyz answering 200") { (try? await self.get("\(admin)/readyz").0) == 200 }

            let body =
                #"{"userId":"u-1","version":3,"focus":"Work","apps":{"chat":{"filterPredicate":"SELF IN {'work'}"}}}"#
            #expect(try await self.get("\(admin)/v1/users/u-1/context", method: "PUT", body: body).0 == 200)
            let (status, stored) = try await self.get("\(admin)/v1/users/u-1/context")
            #expect(status == 200 && stored.contains(#""version":3"#))
            let (_, explained) = try await self.get(
                "\(admin)/v1/explain", method: "POST",
                body: #"{"event":{"id":"n","userId":"u-1","appId":"chat","filterCriteria":"home"}}"#)
            #expect(explained.contains(#""reason":"predicate-mismatch""#))

            // The invalidation reached the broker's topic.
            let consumer = try KafkaConsumer(
                configuration: .init(bootstrapServers: "127.0.0.1:\(kafkaPort)", groupID: nil),
                logger: KafkaTestSupport.logger)
            try consumer.assign(
                (0..<8).map {
                    KafkaTopicPartition(topic: "focus.invalidations", partition: $0, offset: KafkaOffset.beginning)
                })
            let invalidations = KafkaTestSupport.consume(consumer, count: 1, timeout: .seconds(10))
            #expect(invalidations.first?.keyString == "u-1")
            consumer.close()

            #expect(await process.stop(SIGTERM) == (0, false))
            let printed = process.standardOutput
            #expect(printed.contains("kafka: 127.0.0.1:\(kafkaPort) (embedded broker: in memory, keeps nothing)"))
            #expect(printed.contains("admin: \(admin)"))
            // A default start (make run) logs nothing at warning level or above: no librdkafka
            // "is a consumer property and will be ignored by this producer instance".
            let logged = String(decoding: FileManager.default.contents(atPath: logPath) ?? Data(), as: UTF8.self)
            let loud = logged.split(separator: "\n").filter {
                $0.contains(#""level":"warning""#) || $0.contains(#""level":"error""#)
                    || $0.contains(#""level":"critical""#) || $0.contains(" warning ") || $0.contains("CONFWARN")
            }
            #expect(loud.isEmpty, "\(loud)")
            #expect(logged.contains("gateway starting"), "the logs were read")
        }

        @Test(
            "a cluster whose topics contradict the contract stops the start with exit 2 naming the key: a missing topic, a state topic with other partitions than the input"
        )
        func topicsChecked() async throws {
            let topics = TopicNames()
            try await Self.startRefused(
                topics: topics.specifications(partitions: 4).filter { $0.name != topics.summaries },
                saying: "topics.summaries: topic notifications.summaries does not exist")
            try await Self.startRefused(
                topics: topics.specifications(partitions: 4).map { specification in
                    var specification = specification
                    if specification.name == topics.state { specification.partitions = 3 }
                    return specification
                },
                saying: "topics.state: topic focusgate.state has 3 partitions and notifications 4")
        }

        /// Starts `serve` against an embedded broker with `topics`: it must stop with exit status
        /// 2 and `message` in its log.
        private static func startRefused(topics: [KafkaTopicSpecification], saying message: String) async throws {
            let database = ScratchDirectory.process.file("topics", extension: "sqlite")
            defer {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
            }
            let broker = try EmbeddedKafkaBroker(topics: topics, logger: KafkaTestSupport.logger)
            defer { broker.shutdown() }
            let serve = try await ServeProcess(
                executable: ServeProcess.siblingExecutable, bootstrapServers: broker.bootstrapServers,
                databasePath: database)
            try await Wait.until("serve stops", timeout: .seconds(60)) { !serve.isRunning }
            #expect(await serve.exitStatus() == 2)
            #expect(serve.standardError.contains(message), "\(serve.standardError.suffix(1500))")
        }

        @Test("a connection to the admin port that sends nothing is closed after admin.idleTimeoutSeconds, not before")
        func idleConnectionClosed() async throws {
            let broker = try EmbeddedKafkaBroker(
                topics: TopicNames().specifications(partitions: 2), logger: KafkaTestSupport.logger)
            defer { broker.shutdown() }
            let database = ScratchDirectory.process.file("idle", extension: "sqlite")
            defer {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
            }
            let serve = try await ServeProcess(
                executable: ServeProcess.siblingExecutable, bootstrapServers: broker.bootstrapServers,
                databasePath: database, environment: ["FOCUSGATE_ADMIN_IDLETIMEOUTSECONDS": "2"])
            try await Wait.until("/healthz answering", timeout: .seconds(30)) {
                (try? await self.get("http://127.0.0.1:\(serve.adminPort)/healthz").0) == 200 || !serve.isRunning
            }
            #expect(serve.isRunning, "\(serve.standardError.suffix(1500))")
            let socket = connectLoopback(port: serve.adminPort)
            try #require(socket >= 0, "connected to the admin port")
            defer { close(socket) }
            let opened = ContinuousClock.now
            try await Wait.until("the server closing the idle connection", timeout: .seconds(20)) {
                var byte: UInt8 = 0
                let read = recv(socket, &byte, 1, Int32(MSG_DONTWAIT))
                return read == 0 || (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            }
            let kept = ContinuousClock.now - opened
            #expect(kept >= .milliseconds(1500) && kept < .seconds(10), "closed after \(kept)")
            #expect(await serve.stop(SIGTERM) == 0)
        }

        @Test("kafka.properties reach librdkafka: TLS and SASL settings are passed through to every client")
        func securityPropertiesPassThrough() async throws {
            let broker = try EmbeddedKafkaBroker(logger: KafkaTestSupport.logger)
            defer { broker.shutdown() }
            let database = ScratchDirectory.process.file("tls", extension: "sqlite")
            defer {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
            }

            // TLS against the plaintext embedded broker: the clients try a TLS handshake, so the
            // instance never joins its group; it stays up and says why.
            let tls = try await ServeProcess(
                executable: ServeProcess.siblingExecutable, bootstrapServers: broker.bootstrapServers,
                databasePath: database, logLevel: "info",
                environment: ["FOCUSGATE_KAFKA_PROPERTIES_SECURITY_PROTOCOL": "SSL"])
            #expect(try await tls.waitUntilReady(timeout: .seconds(8)) == false, "no TLS broker, so never ready")
            #expect(tls.isRunning, "unreachable brokers are not fatal")
            #expect(await tls.stop(SIGTERM) == 0)
            let tlsLog = tls.standardError
            #expect(tlsLog.contains("SSL"), "librdkafka reports the TLS handshake: \(tlsLog.suffix(1500))")

            // A SASL mechanism librdkafka does not know is refused when the clients are created.
            let sasl = try await ServeProcess(
                executable: ServeProcess.siblingExecutable, bootstrapServers: broker.bootstrapServers,
                databasePath: database,
                environment: [
                    "FOCUSGATE_KAFKA_PROPERTIES_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                    "FOCUSGATE_KAFKA_PROPERTIES_SASL_MECHANISMS": "NOT-A-MECHANISM",
                ])
            #expect(await sasl.exitStatus() != 0)
            let saslLog = sasl.standardError
            #expect(saslLog.contains("NOT-A-MECHANISM"), "the refusal names the value: \(saslLog.suffix(1500))")
        }
    }
}
