package io.sr3.flink.pacing;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class RateExtremeTest {

    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    @Test
    void remembersTheHighestRateForItsMemoryOnly() {
        RateExtreme peak = RateExtreme.highest(Duration.ofSeconds(60));
        assertThat(peak.value(T0)).isZero();

        peak.record(T0, 100);
        peak.record(T0.plusSeconds(10), 900);
        peak.record(T0.plusSeconds(20), 300);
        peak.record(T0.plusSeconds(30), 200);

        assertThat(peak.value(T0.plusSeconds(30))).isEqualTo(900);
        assertThat(peak.value(T0.plusSeconds(70))).as("900 is exactly 60 s old").isEqualTo(900);
        assertThat(peak.value(T0.plusSeconds(71))).as("900 forgotten, 300 next").isEqualTo(300);
        assertThat(peak.value(T0.plusSeconds(85))).isEqualTo(200);
        assertThat(peak.value(T0.plusSeconds(91))).isZero();
    }

    @Test
    void aLaterEqualOrHigherRateReplacesEarlierOnes() {
        RateExtreme peak = RateExtreme.highest(Duration.ofSeconds(60));
        peak.record(T0, 500);
        peak.record(T0.plusSeconds(50), 500);

        assertThat(peak.value(T0.plusSeconds(100))).as("the later 500 is still remembered").isEqualTo(500);
    }

    @Test
    void theLowestRateIsRememberedTheSameWay() {
        RateExtreme low = RateExtreme.lowest(Duration.ofSeconds(60));
        low.record(T0, 300);
        low.record(T0.plusSeconds(10), 100);
        low.record(T0.plusSeconds(20), 2000);

        assertThat(low.value(T0.plusSeconds(20))).isEqualTo(100);
        assertThat(low.value(T0.plusSeconds(71))).as("100 forgotten").isEqualTo(2000);
    }
}
