package io.sr3.flink.pacing;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

class BurstHistoryTest {

    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    private final BurstHistory history = new BurstHistory(Duration.ofMinutes(1));
    private int second;

    @Test
    void learnsHowLongBurstsLastAndTheRateBetweenThem() {
        assertThat(history.outlook(T0)).as("no burst seen yet").isNull();

        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        BurstOutlook quiet = history.outlook(now());
        assertThat(quiet).isNotNull();
        assertThat(quiet.inBurst()).isFalse();
        assertThat(quiet.longestSeconds()).isEqualTo(5);

        feed(2, 2000);
        BurstOutlook inBurst = history.outlook(now().minusSeconds(1));
        assertThat(inBurst.inBurst()).isTrue();
        assertThat(inBurst.burstSeconds()).isEqualTo(1);
        assertThat(inBurst.quietRate()).as("the mean of the quiet phase before it").isEqualTo(300);
        assertThat(inBurst.forecast(2000)).isEqualTo(new InputForecast(2000, 4, 300));
    }

    @Test
    void aHighRateAtTheJobsStartIsNoBurst() {
        feed(3, 2000); // the sources start behind and catch up
        feed(8, 300);

        assertThat(history.outlook(now())).isNull();
    }

    @Test
    void aBurstLongerThanAnyRememberedIsExpectedToLast() {
        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        feed(7, 2000);
        BurstOutlook outlook = history.outlook(now().minusSeconds(1));

        assertThat(outlook.burstSeconds()).isEqualTo(6);
        assertThat(outlook.forecast(2000)).isEqualTo(InputForecast.constant(2000));
    }

    @Test
    void aRestartInterruptsTheBurstWhoseLengthIsThenUnknown() {
        feed(8, 300);
        feed(3, 2000);
        history.interrupt();
        feed(8, 300);

        assertThat(history.outlook(now())).as("the interrupted burst is not remembered").isNull();
    }

    @Test
    void afterARestartABurstAlreadyRunningHasNoKnownStart() {
        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        feed(2, 2000);
        history.interrupt();
        feed(4, 2000);
        assertThat(history.outlook(now()).inBurst()).as("its start is unknown: no forecast of its end").isFalse();

        feed(8, 300);
        assertThat(history.outlook(now()).longestSeconds()).as("the interrupted 6 s burst is not remembered")
                .isEqualTo(5);
    }

    @Test
    void aPauseUnderBackPressureDoesNotSplitABurst() {
        feed(8, 300);
        feed(2, 2000, true);
        feed(1, 400, true); // a checkpoint paused the job: the sources read little
        feed(3, 2000, true);
        feed(8, 300);

        assertThat(history.outlook(now()).longestSeconds()).isEqualTo(6);
    }

    @Test
    void burstsAreForgottenAfterTheMemory() {
        feed(8, 300);
        feed(5, 2000);
        feed(8, 300);
        assertThat(history.outlook(now())).isNotNull();

        feed(60, 300);
        assertThat(history.outlook(now())).isNull();
    }

    @Test
    void aSteadyLoadHasNoBursts() {
        for (int i = 0; i < 30; i++) {
            feed(1, 1000 + (i % 3) * 10);
        }
        BurstOutlook outlook = history.outlook(now());
        if (outlook != null) {
            // Noise around the midpoint makes short "bursts"; their forecast barely differs from the current rate.
            assertThat(outlook.forecast(1020).thenRate()).isCloseTo(1000, offset(20.0));
        }
    }

    /** {@code seconds} samples at {@code rate}, one per second, as LoadMemory feeds them. */
    private void feed(int seconds, double rate) {
        feed(seconds, rate, false);
    }

    private void feed(int seconds, double rate, boolean backPressured) {
        for (int i = 0; i < seconds; i++) {
            history.record(now(), rate, backPressured);
            second++;
        }
    }

    private Instant now() {
        return T0.plusSeconds(second);
    }
}
