import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The instances of the group, asked over their admin API when this one does not hold a user
/// (docs/contract.md, "Any instance answers any user").
///
/// Each `host:port` of `admin.peers` is looked up at every question and stands for every address
/// it resolves to: a Kubernetes headless Service's name is every ready pod of the group, a list of
/// names is those instances. This instance may be among them; it then answers itself like any
/// other. A peer that does not answer within ``timeout`` counts as holding nothing.
struct PeerInstances: Sendable {
    /// One `admin.peers` entry.
    struct Address: Sendable, Hashable, CustomStringConvertible {
        var host: String
        var port: Int

        /// `host:port` (a bracketed IPv6 host too); `nil` when it is not that.
        init?(_ text: some StringProtocol) {
            let text = text.trimmingCharacters(in: .whitespaces)
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                (1...65535).contains(port)
            else { return nil }
            var host = String(text[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, !host.contains(where: { $0 == "/" || $0 == " " }) else { return nil }
            self.host = host
            self.port = port
        }

        var description: String {
            self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
        }
    }

    let addresses: [Address]
    /// Sent as `Authorization: Bearer` (`admin.token`: every instance of a group has the same).
    let token: String?
    /// How long one peer may take to connect and answer.
    var timeout: Duration = .seconds(2)
    /// Answers larger than this are dropped (a badge list is a few kilobytes).
    var maxAnswerBytes = 1 << 20

    /// The bodies of every peer's `200` answer to `GET path`, in no particular order.
    func get(_ path: String) async -> [[UInt8]] {
        let targets = await self.resolved()
        return await withTaskGroup(of: [UInt8]?.self) { group in
            for (host, address) in targets {
                group.addTask { try? await self.get(path, host: host, address: address) }
            }
            var bodies: [[UInt8]] = []
            for await body in group {
                if let body { bodies.append(body) }
            }
            return bodies
        }
    }

    /// Every address of every entry, each once, with the name it was found under.
    private func resolved() async -> [(host: String, address: SocketAddress)] {
        var seen: Set<String> = []
        var targets: [(String, SocketAddress)] = []
        for entry in self.addresses {
            let found = (try? await NIOThreadPool.singleton.runIfActive { Self.lookUp(entry) }) ?? []
            for address in found where seen.insert("\(address)").inserted {
                targets.append((entry.host, address))
            }
        }
        return targets
    }

    /// `getaddrinfo`: every TCP address of the entry.
    private static func lookUp(_ entry: Address) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(entry.host, String(entry.port), &hints, &list) == 0, let list else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        for info in sequence(first: list, next: { $0.pointee.ai_next }) {
            guard let socketAddress = info.pointee.ai_addr else { continue }
            switch info.pointee.ai_family {
            case AF_INET:
                let ipv4 = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                addresses.append(SocketAddress(ipv4, host: entry.host))
            case AF_INET6:
                let ipv6 = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                addresses.append(SocketAddress(ipv6, host: entry.host))
            default:
                continue
            }
        }
        return addresses
    }

    private enum PeerError: Error {
        case timedOut, status(UInt)
    }

    /// One `GET`, within ``timeout``; the body of a `200`.
    private func get(_ path: String, host: String, address: SocketAddress) async throws -> [UInt8] {
        let client = AdminClient(token: self.token, timeout: self.timeout, maxAnswerBytes: self.maxAnswerBytes)
        let answer = await firstAnswer(within: self.timeout, orElse: .failure(PeerError.timedOut)) {
            () async -> Result<AdminClient.Answer, any Error> in
            do {
                return .success(try await client.get(path, host: host, address: address))
            } catch {
                return .failure(error)
            }
        }
        let got = try answer.get()
        guard got.status == 200 else { throw PeerError.status(got.status) }
        return got.body
    }
}
