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
 * What a node learns of a link from the blocks it sends: the bytes delivered over the time the
 * link was busy ({@link DeliveryRate}), without the receiver's store write, which the receiver
 * reports in its answer.
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
        assertThat(transfer.elapsed().toNanos()).isPositive().isLessThanOrEqualTo(wall);
    }

    @Test
    void thePeersOwnWorkIsNotTheLinksButCountsAtMostHalf() {
        DeliveryRate.Sample alone = new DeliveryRate.Sample(1 << 20, 100_000_000L, true);
        assertThat(Transfer.measured("p", Transfer.Direction.SENT, alone, 30_000_000L).elapsed())
                .isEqualTo(Duration.ofMillis(70));
        assertThat(Transfer.measured("p", Transfer.Direction.SENT, alone, 500_000_000L).elapsed())
                .as("a wrong answer at most doubles the rate").isEqualTo(Duration.ofMillis(50));
        assertThat(Transfer.measured("p", Transfer.Direction.SENT, alone, -5).elapsed()).isEqualTo(Duration.ofMillis(100));

        DeliveryRate.Sample queued = new DeliveryRate.Sample(1 << 20, 100_000_000L, false);
        assertThat(Transfer.measured("p", Transfer.Direction.SENT, queued, 30_000_000L).elapsed())
                .as("behind another block, the peer's write overlapped this one's bytes").isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void aSmallBlockQueuedBehindALargeOneIsNotTakenForASharedLink() {
        // One connection, 10 MB/s: a 4 MB block, then a 1 MB block sent 1 ms later, behind it.
        DeliveryRate link = new DeliveryRate();
        DeliveryRate.Start large = link.start(0);
        DeliveryRate.Start small = link.start(ms(1));
        DeliveryRate.Sample first = link.complete(large, 4_000_000, ms(400));
        DeliveryRate.Sample second = link.complete(small, 1_000_000, ms(500));

        assertThat(rate(first)).isEqualTo(10e6);
        assertThat(rate(second)).as("both blocks over the busy time, not 2 x 1 MB in 499 ms").isEqualTo(10e6);
        assertThat(first.alone()).isTrue();
        assertThat(second.alone()).isFalse();
    }

    @Test
    void aBlockAfterAnIdleLinkIsTimedFromItsOwnStart() {
        DeliveryRate link = new DeliveryRate();
        link.complete(link.start(0), 1_000_000, ms(100));
        DeliveryRate.Sample later = link.complete(link.start(ms(5_000)), 2_000_000, ms(5_100));
        assertThat(rate(later)).as("the idle time is not the link's").isEqualTo(20e6);
        assertThat(later.alone()).isTrue();
    }

    @Test
    void aFailedBlockLeavesTheLinkIdle() {
        DeliveryRate link = new DeliveryRate();
        link.start(0);
        link.fail();
        assertThat(link.start(ms(1_000)).alone()).isTrue();
    }

    private static long ms(long millis) {
        return millis * 1_000_000L;
    }

    private static double rate(DeliveryRate.Sample sample) {
        return sample.bytes() / (sample.nanos() / 1e9);
    }

    private static byte[] block() {
        byte[] data = new byte[TestingRing.testConfig().blockSize()];
        new Random(5).nextBytes(data);
        return data;
    }
}
