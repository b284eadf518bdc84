import FocusGateCore
import Foundation
import FocusGateKafka
import Testing

// MARK: - The auditor's checks

extension Audit {
    /// What one audit found, printed by the fault tests.
    struct Findings: CustomStringConvertible {
        var inputs: Int
        var missing: Int
        var unexpected: Int
        /// Outputs beyond the first per input (the mock broker shows aborted outputs too).
        var repeatedOutputs: Int
        var orderViolations: Int
        var badgeMismatches: Int
        /// Keys whose last badge record is older than their newest one, while the newest and
        /// the owner's committed state are right (see `committedBadges` in ``check``).
        var olderBadgesLast = 0
        /// Repeated outputs identical to the first copy, timestamp included: a produce request
        /// sent again (see `brokerResends` in ``check``).
        var resentOutputs = 0

        var description: String {
            "\(self.inputs) inputs, \(self.missing) missing, \(self.unexpected) unexpected, \(self.repeatedOutputs) repeated outputs, \(self.orderViolations) order violations, \(self.badgeMismatches) badge mismatches"
                + (self.olderBadgesLast > 0 ? " (\(self.olderBadgesLast) with an older record last)" : "")
                + (self.resentOutputs > 0 ? " (\(self.resentOutputs) repeats resent by the producer)" : "")
        }
    }

    /// Audits the outputs against the inputs that produced them:
    /// - every input has an outcome (delivered, silenced or DLQ) and nothing else came out;
    /// - per user and output topic, first outputs come in input order;
    /// - repeated outputs number at most `consumedAgain`, the records the gateway itself counted as
    ///   consumed a second time (``InProcessGateway/consumedAgain``): those an abort replayed
    ///   (`focusgate_replayed_records_total`), which in exactly-once mode a real cluster hides (the
    ///   embedded broker writes no abort markers), and at-least-once those delivered past the
    ///   group's offsets when their partition left an instance
    ///   (`focusgate_reconsumed_records_total`): the duplicates the mode allows;
    /// - the last badge record per (user, app) equals a recomputation from the inputs (under
    ///   `context`, every user's, when given); unless `checksBadges` is false, for a test whose
    ///   Focus changes with no input (a schedule, an expiry), which the recomputation cannot know:
    ///   such a test checks the badges itself. With `committedBadges` (the owners' committed
    ///   state, read after the run), a key whose last record is older than its newest-sequence
    ///   one is accepted when that newest record and the committed state both equal the
    ///   recomputation: a transaction that aborted after the newest record, by a member that had
    ///   lost the partition, stays visible on the embedded broker (no abort markers), where a real
    ///   cluster hides it. Counted in ``Findings/olderBadgesLast``.
    /// - With `brokerResends`, repeats identical to the first copy (same partition, key, value,
    ///   headers with the decision's time, and producer timestamp; a replay decides again and
    ///   produces anew) do not count against `consumedAgain`: the producer sent their request again
    ///   after its connection closed, and the embedded broker, which drops such a resend only for
    ///   transactional producers, wrote it twice. A real broker drops it for any idempotent
    ///   producer. Counted in ``Findings/resentOutputs``.
    @discardableResult
    func check(
        against records: [(key: String?, value: String)], consumedAgain: Double, context: CompiledFocusContext? = nil,
        checksBadges: Bool = true, committedBadges: [String: Badge]? = nil, brokerResends: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Findings {
        let expected = EmbeddedBrokerTests.GatewayRestartTests.outputIDs(records)
        let position = Dictionary(expected.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let outputs = self.outputsByID
        let missing = Set(expected).subtracting(outputs.keys)
        let unexpected = Set(outputs.keys).subtracting(expected)
        let repeated = outputs.values.reduce(0) { $0 + $1.count - 1 }
        let resent = outputs.values.reduce(0) { count, copies in
            count
                + copies.dropFirst().filter { copy in
                    var first = copies[0]
                    first.offset = copy.offset
                    return first == copy
                }.count
        }

        var violations: [String] = []
        for (topic, isDeadLetters) in [(self.delivered, false), (self.silenced, false), (self.deadLetters, true)] {
            var lastPosition: [String: Int] = [:]
            var seen = Set<String>()
            for message in topic {
                let id = isDeadLetters ? (message.valueString ?? "") : (Self.id(of: message) ?? "?")
                guard seen.insert(id).inserted, let index = position[id] else { continue }
                let user = message.keyString ?? ""
                if let last = lastPosition[user], last > index { violations.append("\(user): \(id)") }
                lastPosition[user] = index
            }
        }
        let expectedBadges = Events.expectedBadges(records, context: context)
        let finalBadges = self.finalBadges
        let highestBadges = self.highestBadges
        let differing =
            checksBadges
            ? Set(expectedBadges.keys).union(finalBadges.keys).filter { expectedBadges[$0] != finalBadges[$0] }
            : Set()
        let olderLast = differing.filter { key in
            guard let committedBadges, let expected = expectedBadges[key] else { return false }
            return highestBadges[key] == expected && committedBadges[key] == expected
        }
        let badgeMismatches = differing.subtracting(olderLast)

        #expect(missing.isEmpty, "no input lost: \(missing.sorted().prefix(5))", sourceLocation: sourceLocation)
        #expect(
            unexpected.isEmpty, "no output without an input: \(unexpected.prefix(5))", sourceLocation: sourceLocation)
        #expect(violations.isEmpty, "per-user order kept: \(violations.prefix(5))", sourceLocation: sourceLocation)
        #expect(
            Double(repeated - (brokerResends ? resent : 0)) <= consumedAgain,
            "\(repeated) repeated outputs (\(resent) resent), but the gateway counted only \(Int(consumedAgain)) records consumed again",
            sourceLocation: sourceLocation)
        func described(_ key: String) -> String {
            func text(_ badge: Badge?) -> String { badge.map(String.init(describing:)) ?? "none" }
            let committed = committedBadges.map { text($0[key]) } ?? "not asked"
            return
                "\(key) expected \(text(expectedBadges[key])), found \(text(finalBadges[key])) (highest sequence: \(text(highestBadges[key])); committed: \(committed))"
        }
        #expect(
            badgeMismatches.isEmpty,
            "badges equal a recomputation: \(badgeMismatches.count) differ, e.g. \(badgeMismatches.sorted().prefix(3).map { described($0) })",
            sourceLocation: sourceLocation)
        return Findings(
            inputs: expected.count, missing: missing.count, unexpected: unexpected.count, repeatedOutputs: repeated,
            orderViolations: violations.count, badgeMismatches: badgeMismatches.count, olderBadgesLast: olderLast.count,
            resentOutputs: resent)
    }
}

// MARK: - Summaries

extension Audit {
    /// One summary record, as read back.
    struct SummaryRecord {
        var summaryID: String
        var userID: String
        var trigger: String
        var focus: String?
        var total: Int
        /// Per app: the ids of the items listed.
        var items: [String]
        var value: [UInt8]
    }

    /// The summaries published, in order.
    var summaryRecords: [SummaryRecord] {
        self.summaries.compactMap { message in
            guard let value = message.value,
                let object = try? JSONSerialization.jsonObject(with: Data(value)) as? [String: Any],
                let summaryID = object["summaryId"] as? String, let userID = object["userId"] as? String,
                let trigger = object["trigger"] as? String, let total = object["total"] as? Int,
                let apps = object["apps"] as? [[String: Any]], message.keyString == userID
            else {
                Issue.record("unreadable summary record")
                return nil
            }
            let items = apps.flatMap { ($0["top"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } }
            return SummaryRecord(
                summaryID: summaryID, userID: userID, trigger: trigger, focus: object["focus"] as? String,
                total: total, items: items, value: value)
        }
    }

    /// Audits the summaries against the silenced outputs:
    /// - every item a summary lists was silenced, for the summary's user;
    /// - no notification is listed by two different summaries;
    /// - a summary published twice (a replay after an abort or a crash) is the same summary: same
    ///   id, same items; and only when `repeatsAllowed` (a run with faults).
    ///
    /// - Returns: The distinct summaries, by id.
    @discardableResult
    func checkSummaries(repeatsAllowed: Bool = false, sourceLocation: SourceLocation = #_sourceLocation)
        -> [String: SummaryRecord]
    {
        var silencedBy: [String: String] = [:]
        for message in self.silenced {
            if let id = Self.id(of: message) { silencedBy[id] = message.keyString }
        }
        var distinct: [String: SummaryRecord] = [:]
        var listedIn: [String: String] = [:]
        var repeats = 0
        for summary in self.summaryRecords {
            if let earlier = distinct[summary.summaryID] {
                repeats += 1
                #expect(
                    earlier.items == summary.items && earlier.total == summary.total,
                    "a summary published again lists the same items: \(summary.summaryID)",
                    sourceLocation: sourceLocation)
                continue
            }
            distinct[summary.summaryID] = summary
            for id in summary.items {
                #expect(
                    silencedBy[id] == summary.userID, "\(id), listed for \(summary.userID), was silenced for that user",
                    sourceLocation: sourceLocation)
                if let other = listedIn.updateValue(summary.summaryID, forKey: id) {
                    Issue.record(
                        "\(id) is listed by two summaries, \(other) and \(summary.summaryID)",
                        sourceLocation: sourceLocation)
                }
            }
        }
        #expect(repeatsAllowed || repeats == 0, "\(repeats) summaries published again", sourceLocation: sourceLocation)
        return distinct
    }
}
