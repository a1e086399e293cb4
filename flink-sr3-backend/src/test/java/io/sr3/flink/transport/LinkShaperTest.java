package io.sr3.flink.transport;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The shaper's virtual-time queues, with an explicit clock. */
class LinkShaperTest {

    private static final InetSocketAddress A = new InetSocketAddress("127.0.0.1", 1001);
    private static final InetSocketAddress B = new InetSocketAddress("127.0.0.1", 1002);
    private static final InetSocketAddress C = new InetSocketAddress("127.0.0.1", 1003);
    private static final long MS = 1_000_000;

    @Test
    void oneLinkSerialisesAnswersAtItsRatePlusLatency() {
        LinkShaper shaper = new LinkShaper(1e9, 4, 0, new LinkShaper.ShapedLink(1e6, Duration.ofMillis(5)));
        // 1 MB/s: 10 kB take 10 ms, queued behind each other, plus 5 ms latency each.
        assertThat(shaper.delayNanos(A, 10_000, 0)).isEqualTo(15 * MS);
        assertThat(shaper.delayNanos(A, 10_000, 0)).isEqualTo(25 * MS);
        assertThat(shaper.delayNanos(A, 10_000, 100 * MS)).isEqualTo(15 * MS);
    }

    @Test
    void linksFromDifferentPeersRunInParallelUntilTheInboundPortLimits() {
        LinkShaper shaper = new LinkShaper(2e6, 4, 0, new LinkShaper.ShapedLink(1e6, Duration.ZERO));
        assertThat(shaper.delayNanos(A, 10_000, 0)).isEqualTo(10 * MS);
        assertThat(shaper.delayNanos(B, 10_000, 0)).isEqualTo(10 * MS);
        // A third sender: the 2 MB/s port has 20 kB queued already, so 30 kB are through at 15 ms.
        assertThat(shaper.delayNanos(C, 10_000, 0)).isEqualTo(15 * MS);
    }

    @Test
    void incastSlowsThePortDownBeyondTheThreshold() {
        LinkShaper calm = new LinkShaper(1e6, 1, 1.0, new LinkShaper.ShapedLink(1e6, Duration.ZERO));
        assertThat(calm.delayNanos(A, 100_000, 0)).isEqualTo(100 * MS);

        LinkShaper crowded = new LinkShaper(1e6, 1, 1.0, new LinkShaper.ShapedLink(1e6, Duration.ZERO));
        crowded.delayNanos(A, 100_000, 0); // A's answer is in flight until 100 ms
        // B sends while A's answer is in flight: two senders, threshold 1, penalty 1 -> the port runs
        // at half speed behind A's 100 ms: 100 kB more take 200 ms.
        assertThat(crowded.delayNanos(B, 100_000, 0)).isEqualTo(300 * MS);
    }

    @Test
    void smallAnswersNeverCountAsSenders() {
        LinkShaper shaper = new LinkShaper(1e6, 1, 1.0, new LinkShaper.ShapedLink(1e6, Duration.ZERO));
        shaper.delayNanos(A, 1_000, 0); // a ping: 1 ms on A's link, not a sender
        assertThat(shaper.delayNanos(B, 100_000, 0)).as("B alone on the port after A's 1 ms").isEqualTo(101 * MS);
    }
}
