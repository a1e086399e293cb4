package io.sr3.flink.node;

import io.sr3.flink.testing.Deadline;
import io.sr3.flink.transport.Crc32c;
import io.sr3.flink.transport.Frame;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.Payloads;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a node learns of a link from one block it sends: the block's size and the time it spent
 * on the link, without the receiver's store write, which the receiver reports in its answer.
 */
class TransferObservationTest {

    @TempDir Path root;

    private TestingRing ring;

    @BeforeEach
    void start() throws Exception {
        ring = TestingRing.start(2, TestingRing.testConfig(), root);
        ring.awaitMembers(2);
    }

    @AfterEach
    void stop() {
        ring.close();
    }

    @Test
    void aPeerAnswersABlockWithHowLongItsStoreWriteTook() {
        byte[] data = block();
        long started = System.nanoTime();
        Frame answer = ring.node(0).client()
                .request(ring.node(1).self().address(), Payloads.putBlock("b-timed", data, Crc32c.of(data)),
                        Duration.ofSeconds(30))
                .join();
        long roundTrip = System.nanoTime() - started;

        assertThat(answer.type()).isEqualTo(MessageType.OK);
        assertThat(Payloads.storeNanos(answer.payload())).as("the store write, within the round trip")
                .isPositive().isLessThan(roundTrip);
    }

    @Test
    void aBlockSentToAPeerIsObservedWithItsSizeAndDirection() {
        List<Transfer> seen = new CopyOnWriteArrayList<>();
        ring.node(0).links().onTransfer(seen::add);
        byte[] data = block();
        long started = System.nanoTime();
        ring.node(0).put(ring.node(1).self(), "b-observed", data).join();
        long wall = System.nanoTime() - started;

        Deadline.poll("the transfer observed", TestingRing.AWAIT_TIMEOUT, () -> !seen.isEmpty());
        Transfer transfer = seen.get(0);
        assertThat(transfer.peer()).isEqualTo(ring.node(1).self().id());
        assertThat(transfer.direction()).isEqualTo(Transfer.Direction.SENT);
        assertThat(transfer.bytes()).isEqualTo(data.length);
        assertThat(transfer.concurrent()).isEqualTo(1);
        assertThat(transfer.elapsed().toNanos()).isPositive().isLessThanOrEqualTo(wall);
    }

    @Test
    void thePeersOwnWorkIsNotTheLinksButCountsAtMostHalf() {
        Transfer sent = Transfer.measured("p", Transfer.Direction.SENT, 1 << 20, 100_000_000L, 30_000_000L, 1, 1);
        assertThat(sent.elapsed()).isEqualTo(Duration.ofMillis(70));

        Transfer claimedTooMuch = Transfer.measured("p", Transfer.Direction.SENT, 1 << 20, 100_000_000L,
                500_000_000L, 1, 1);
        assertThat(claimedTooMuch.elapsed()).as("a wrong answer at most doubles the rate").isEqualTo(
                Duration.ofMillis(50));

        Transfer negative = Transfer.measured("p", Transfer.Direction.SENT, 1 << 20, 100_000_000L, -5, 1, 1);
        assertThat(negative.elapsed()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void aTransferSharedTheLinkWithTheFewerInFlightAtItsStartOrEnd() {
        // Started behind two others that ended just after: it had the link mostly to itself.
        assertThat(Transfer.measured("p", Transfer.Direction.RECEIVED, 1 << 20, 1, 0, 3, 1).concurrent()).isEqualTo(1);
        // Started alone, joined by two more before it ended: those shared only its end.
        assertThat(Transfer.measured("p", Transfer.Direction.RECEIVED, 1 << 20, 1, 0, 1, 3).concurrent()).isEqualTo(1);
        assertThat(Transfer.measured("p", Transfer.Direction.RECEIVED, 1 << 20, 1, 0, 4, 4).concurrent()).isEqualTo(4);
    }

    private static byte[] block() {
        byte[] data = new byte[TestingRing.testConfig().blockSize()];
        new Random(5).nextBytes(data);
        return data;
    }
}
