@testable import FocusGate
import FocusGateCore
import Testing

/// Which records of an owned partition a worker takes after a rewind (``GatewayWorker/Partition``).
@Suite("A worker's partition progress across rewinds")
struct PartitionProgressTests {
    @Test("records fetched before a rewind are refused until the replay begins")
    func staleRecordsRefused() {
        let partition = GatewayWorker.Partition(state: PartitionState(), committed: 10)
        #expect(partition.accepts(offset: 10) && partition.accepts(offset: 11))
        partition.staleFrom = partition.seen  // the rewind, as abortAndRewind leaves it
        #expect(!partition.accepts(offset: 12), "fetched before the seek")
        #expect(partition.accepts(offset: 10), "the replay")
        #expect(partition.accepts(offset: 11) && partition.accepts(offset: 12))
    }

    @Test("while a refused rewind waits to be tried again, no record is taken or noted as seen")
    func pendingRewindRefusesEverything() {
        let partition = GatewayWorker.Partition(state: PartitionState(), committed: 10)
        #expect(partition.accepts(offset: 10) && partition.accepts(offset: 11))
        partition.staleFrom = partition.seen
        partition.next = nil
        partition.rewindPending = true
        for offset in [12, 13, 10] as [Int64] {
            #expect(!partition.accepts(offset: offset), "offset \(offset) before the seek went through")
        }
        #expect(partition.seen == 12)
        partition.rewindPending = false  // the seek went through
        #expect(!partition.accepts(offset: 14), "fetched before the seek")
        #expect(partition.accepts(offset: 10), "the replay")
    }

    @Test("records of commits in use whose offsets the group does not hold are what a next owner consumes again")
    func pastTheGroupCounted() {
        let partition = GatewayWorker.Partition(state: PartitionState(), committed: 10)
        #expect(partition.committedPastGroup == 0)
        // Two commits in memory, their offsets waiting for their records' acknowledgements.
        partition.committed = 15
        #expect(partition.committedPastGroup == 5)
        partition.groupOffset = 15  // the group took them
        #expect(partition.committedPastGroup == 0)
        partition.committed = 18
        partition.groupBehind = true  // the group refused the next
        #expect(partition.committedPastGroup == 3)
    }
}
