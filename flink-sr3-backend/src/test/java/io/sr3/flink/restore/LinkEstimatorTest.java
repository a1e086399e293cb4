package io.sr3.flink.restore;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class LinkEstimatorTest {

    private static final Link DEFAULT = new Link(100e6, Duration.ofMillis(1));
    private static final Duration WINDOW = Duration.ofMinutes(10);

    @Test
    void unobservedPeerGetsTheDefault() {
        assertThat(new LinkEstimator(WINDOW, DEFAULT).link("h0")).isEqualTo(DEFAULT);
    }

    @Test
    void theRateIsTheHighestSampleWithinTheWindow() {
        long[] now = {0};
        LinkEstimator estimator = new LinkEstimator(WINDOW, DEFAULT, () -> now[0]);
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(100)); // 100 MB/s
        assertThat(estimator.link("h0").bytesPerSecond()).isCloseTo(100e6, within(1.0));
        now[0] += Duration.ofMinutes(1).toNanos();
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(50)); // 200 MB/s
        now[0] += Duration.ofMinutes(1).toNanos();
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(200)); // 50 MB/s, the link shared with a checkpoint
        assertThat(estimator.link("h0").bytesPerSecond()).as("the maximum, not an average").isCloseTo(200e6, within(1.0));
        assertThat(estimator.link("h0").roundTrip()).isEqualTo(DEFAULT.roundTrip());
    }

    @Test
    void samplesOlderThanTheWindowAreForgottenButTheLatestStands() {
        long[] now = {0};
        LinkEstimator estimator = new LinkEstimator(WINDOW, DEFAULT, () -> now[0]);
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(50)); // 200 MB/s
        now[0] += Duration.ofMinutes(6).toNanos();
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(200)); // 50 MB/s: the link got slower
        now[0] += Duration.ofMinutes(2).toNanos();
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(100)); // 100 MB/s
        assertThat(estimator.link("h0").bytesPerSecond()).isCloseTo(200e6, within(1.0));

        now[0] += Duration.ofMinutes(3).toNanos(); // 11 minutes after the 200 MB/s sample
        assertThat(estimator.link("h0").bytesPerSecond()).isCloseTo(100e6, within(1.0));
        now[0] += Duration.ofHours(1).toNanos();
        assertThat(estimator.link("h0").bytesPerSecond()).as("the latest sample, not the default").isCloseTo(100e6,
                within(1.0));
        assertThat(estimator.source("h0")).startsWith("rate measured 3780 s ago");
    }

    @Test
    void aProbeReplacesWhatTransfersTaught() {
        LinkEstimator estimator = new LinkEstimator(WINDOW, DEFAULT);
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(50)); // 200 MB/s
        estimator.set("h0", new Link(40e6, Duration.ofMillis(3)));
        assertThat(estimator.link("h0")).isEqualTo(new Link(40e6, Duration.ofMillis(3)));
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(500)); // 20 MB/s
        assertThat(estimator.link("h0").bytesPerSecond()).isCloseTo(40e6, within(1.0));
    }

    @Test
    void smallTransfersDoNotCountAsBandwidth() {
        LinkEstimator estimator = new LinkEstimator(WINDOW, DEFAULT);
        estimator.recordTransfer("h0", 1_000_000, Duration.ofMillis(10)); // under 1 MiB
        assertThat(estimator.link("h0")).isEqualTo(DEFAULT);
    }

    @Test
    void eachEstimateSaysWhenItWasMeasuredOrThatItIsTheDefault() {
        long[] now = {0};
        LinkEstimator estimator = new LinkEstimator(WINDOW, DEFAULT, () -> now[0]);
        assertThat(estimator.source("h0")).isEqualTo("rate default, round trip default");

        estimator.recordRoundTrip("h0", Duration.ofMillis(1));
        now[0] += Duration.ofSeconds(5).toNanos();
        estimator.recordTransfer("h0", 10_000_000, Duration.ofMillis(100));
        now[0] += Duration.ofSeconds(2).toNanos();

        assertThat(estimator.source("h0")).isEqualTo("rate measured 2 s ago, round trip measured 7 s ago");
    }

    @Test
    void roundTripsAreAveragedSeparately() {
        LinkEstimator estimator = new LinkEstimator(WINDOW, DEFAULT);
        estimator.recordRoundTrip("h1", Duration.ofMillis(40));
        estimator.recordRoundTrip("h1", Duration.ofMillis(0));
        assertThat(estimator.link("h1").roundTrip()).isEqualTo(Duration.ofMillis(28)); // 0.3 of the new sample
        assertThat(estimator.link("h1").bytesPerSecond()).isEqualTo(DEFAULT.bytesPerSecond());
        assertThat(estimator.links()).containsOnlyKeys("h1");
    }
}
