@testable import FocusGate
import Testing

@Suite("Topic check at start")
struct TopicCheckTests {
    let topics = TopicNames()

    @Test("the compacted topics must include compact in their cleanup.policy; a topic not reported is not judged")
    func compaction() throws {
        let compacted = Dictionary(
            uniqueKeysWithValues: self.topics.usages.filter(\.isCompacted).map { ($0.name, "compact") })
        try TopicCheck.checkCompaction(self.topics, policies: compacted)
        try TopicCheck.checkCompaction(self.topics, policies: [self.topics.state: "compact, delete"])
        try TopicCheck.checkCompaction(self.topics, policies: [:])
        var deleting = compacted
        deleting[self.topics.badges] = "delete"
        #expect {
            try TopicCheck.checkCompaction(self.topics, policies: deleting)
        } throws: { error in
            (error as? ServerConfiguration.Error)?.key == "topics.badges"
                && "\(error)".contains("notifications.badges has cleanup.policy=delete")
        }
        // A topic the contract does not compact may delete.
        try TopicCheck.checkCompaction(
            self.topics, policies: compacted.merging([self.topics.delivered: "delete"]) { $1 })
    }

    @Test("focusgate.state must keep the writer's timestamps (CreateTime); not reported, not judged")
    func stateTimestamps() throws {
        try TopicCheck.checkStateTimestamps(self.topics, type: "CreateTime")
        try TopicCheck.checkStateTimestamps(self.topics, type: nil)
        #expect {
            try TopicCheck.checkStateTimestamps(self.topics, type: "LogAppendTime")
        } throws: { error in
            (error as? ServerConfiguration.Error)?.key == "topics.state"
                && "\(error)".contains("focusgate.state has message.timestamp.type=LogAppendTime")
        }
    }

    @Test("focusgate.state must have as many partitions as notifications")
    func partitions() throws {
        try TopicCheck.checkPartitions(self.topics, counts: [self.topics.notifications: 12, self.topics.state: 12])
        #expect {
            try TopicCheck.checkPartitions(self.topics, counts: [self.topics.notifications: 12, self.topics.state: 6])
        } throws: { error in
            (error as? ServerConfiguration.Error)?.key == "topics.state"
        }
    }
}
