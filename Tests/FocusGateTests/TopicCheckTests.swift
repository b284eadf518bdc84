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

    @Test(
        "every topic FocusGate writes must take its largest record (max.message.bytes); the input topic and topics not reported are not judged"
    )
    func recordSizes() throws {
        let everyTopic = Dictionary(uniqueKeysWithValues: TopicCheck.keys(self.topics).map { ($0.name, "1048588") })
        try TopicCheck.checkRecordSizes(self.topics, limits: everyTopic, largestRecord: 1_000_000)
        try TopicCheck.checkRecordSizes(self.topics, limits: [:], largestRecord: 1_000_000)
        try TopicCheck.checkRecordSizes(
            self.topics, limits: [self.topics.notifications: "1000"], largestRecord: 1_000_000)
        for (key, name) in TopicCheck.keys(self.topics) where name != self.topics.notifications {
            #expect {
                try TopicCheck.checkRecordSizes(
                    self.topics, limits: everyTopic.merging([name: "500000"]) { $1 }, largestRecord: 1_000_000)
            } throws: { error in
                (error as? ServerConfiguration.Error)?.key == key
                    && "\(error)".contains("\(name) has max.message.bytes=500000, below the 1000000 bytes")
            }
        }
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
