package io.sr3.flink;

import io.sr3.flink.node.TestingRing;
import io.sr3.flink.pacing.Decision.Reason;
import io.sr3.flink.pacing.PacerStatus;
import io.sr3.flink.testing.Deadline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The JobManager side of the pacer metrics, on a real ring: publish, throttle, clear. */
class RingPacerStatusPublisherTest {

    @TempDir Path root;

    private TestingRing ring;

    @BeforeEach
    void start() throws Exception {
        ring = TestingRing.start(2, TestingRing.testConfig(), root);
    }

    @AfterEach
    void stop() {
        ring.close();
    }

    @Test
    void publishesAtMostOncePerIntervalAndClearsOnStop() {
        AtomicLong nanos = new AtomicLong();
        RingPacerStatusPublisher publisher = new RingPacerStatusPublisher("job-2", nanos::get);
        publisher.publish(status(1));
        Deadline.poll("the first status on the ring", TestingRing.AWAIT_TIMEOUT, () -> read() != null && read().decisions() == 1);

        nanos.addAndGet(RingPacerStatusPublisher.MIN_INTERVAL.toNanos() - 1);
        publisher.publish(status(2)); // within the interval: dropped
        nanos.addAndGet(1);
        publisher.publish(status(3));
        Deadline.poll("the third status on the ring", TestingRing.AWAIT_TIMEOUT, () -> read().decisions() == 3);

        publisher.clear();
        assertThat(read()).isNull();
    }

    /** A pacer that stops right after publishing: the write still in flight must not outlive the clear. */
    @Test
    void aClearRightAfterAPublishLeavesNothingBehind() {
        AtomicLong nanos = new AtomicLong();
        for (int attempt = 0; attempt < 20; attempt++) {
            RingPacerStatusPublisher publisher = new RingPacerStatusPublisher("job-2", nanos::get);
            publisher.publish(status(attempt));
            publisher.clear();

            assertThat(read()).as("attempt %d", attempt).isNull();
            assertThat(readOn(0)).as("attempt %d, on the publishing node", attempt).isNull();
        }
    }

    @Test
    void aStatusSurvivesItsEncoding() {
        PacerStatus status = new PacerStatus(7_500, 3_200, 5_000, 1_000, false, true, 42,
                Map.of(Reason.AGE_BOUND, 3L, Reason.CHEAPEST_MOMENT, 1L), Reason.CATCHING_UP, 100L << 20, 30_000,
                System.currentTimeMillis());

        assertThat(RingPacerStatusPublisher.decode(RingPacerStatusPublisher.encode(status))).isEqualTo(status);
    }

    private static PacerStatus status(long decisions) {
        return new PacerStatus(1000, 500, -1, -1, true, false, decisions, Map.of(), null, -1, -1,
                System.currentTimeMillis());
    }

    private PacerStatus read() {
        return readOn(1);
    }

    private PacerStatus readOn(int node) {
        try {
            byte[] encoded = ring.node(node).storage().readAny(RingPacerStatusPublisher.key("job-2"), "status");
            return encoded == null ? null : RingPacerStatusPublisher.decode(encoded);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
