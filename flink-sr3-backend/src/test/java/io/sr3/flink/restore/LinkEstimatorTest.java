package io.sr3.flink.restore;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class LinkEstimatorTest {

    private static final Link DEFAULT = new Link(100e6, Duration.ofMillis(1));

    @Test
    void unobservedPeerGetsTheDefault() {
        assertThat(new LinkEstimator(0.5, DEFAULT).link("h0")).isEqualTo(DEFAULT);
    }

    @Test
    void firstSampleIsTakenAsIsThenAveraged() {
        LinkEstimator estimator = new LinkEstimator(0.5, DEFAULT);
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(100)); // 100 MB/s
        assertThat(estimator.link("h0").bytesPerSecond()).isCloseTo(100e6, within(1.0));
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(50)); // 200 MB/s
        assertThat(estimator.link("h0").bytesPerSecond()).isCloseTo(150e6, within(1.0));
        assertThat(estimator.link("h0").roundTrip()).isEqualTo(DEFAULT.roundTrip());
    }

    @Test
    void aTransferThatSharedTheLinkWithOthersCountsForAllOfThem() {
        LinkEstimator estimator = new LinkEstimator(1.0, DEFAULT);
        // One of four blocks in flight together: 1 MB in 40 ms is 25 MB/s of the link's 100 MB/s.
        estimator.recordTransfer("h0", 1_000_000, Duration.ofMillis(40), 4);
        assertThat(estimator.link("h0").bytesPerSecond()).isCloseTo(100e6, within(1.0));
        // The block's own size decides whether it says anything about bandwidth.
        estimator.recordTransfer("h1", 1000, Duration.ofMillis(1), 100);
        assertThat(estimator.link("h1")).isEqualTo(DEFAULT);
    }

    @Test
    void smallTransfersDoNotCountAsBandwidth() {
        LinkEstimator estimator = new LinkEstimator(0.5, DEFAULT);
        estimator.recordTransfer("h0", 1000, Duration.ofMillis(10));
        assertThat(estimator.link("h0")).isEqualTo(DEFAULT);
    }

    @Test
    void eachEstimateSaysWhenItWasMeasuredOrThatItIsTheDefault() {
        long[] now = {0};
        LinkEstimator estimator = new LinkEstimator(0.5, DEFAULT, () -> now[0]);
        assertThat(estimator.source("h0")).isEqualTo("rate default, round trip default");

        estimator.recordRoundTrip("h0", Duration.ofMillis(1));
        now[0] += Duration.ofSeconds(5).toNanos();
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(100));
        now[0] += Duration.ofSeconds(2).toNanos();

        assertThat(estimator.source("h0")).isEqualTo("rate measured 2 s ago, round trip measured 7 s ago");
    }

    @Test
    void roundTripsAreAveragedSeparately() {
        LinkEstimator estimator = new LinkEstimator(0.25, DEFAULT);
        estimator.recordRoundTrip("h1", Duration.ofMillis(40));
        estimator.recordRoundTrip("h1", Duration.ofMillis(0));
        assertThat(estimator.link("h1").roundTrip()).isEqualTo(Duration.ofMillis(30));
        assertThat(estimator.link("h1").bytesPerSecond()).isEqualTo(DEFAULT.bytesPerSecond());
        assertThat(estimator.links()).containsOnlyKeys("h1");
    }
}
