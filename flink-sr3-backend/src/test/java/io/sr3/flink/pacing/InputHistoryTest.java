package io.sr3.flink.pacing;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

class InputHistoryTest {

    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");

    private final InputHistory history = new InputHistory(Duration.ofMinutes(1));

    @Test
    void countsTheRecordsSinceAMomentIncludingABurstThatEnded() {
        history.record(T0, T0.plusSeconds(8), 300);
        history.record(T0.plusSeconds(8), T0.plusSeconds(13), 2000);
        history.record(T0.plusSeconds(13), T0.plusSeconds(16), 300);

        assertThat(history.recordsSince(T0.plusSeconds(4), T0.plusSeconds(16), 300))
                .as("4 s quiet + the 5 s burst + 3 s quiet, not 12 s x the current 300/s").isCloseTo(
                        4 * 300 + 5 * 2000 + 3 * 300, offset(1e-6));
    }

    @Test
    void gapsAndTimesBeforeTheFirstSampleCountAtTheGivenRate() {
        history.record(T0.plusSeconds(10), T0.plusSeconds(12), 100);
        history.record(T0.plusSeconds(14), T0.plusSeconds(15), 100);

        assertThat(history.recordsSince(T0, T0.plusSeconds(16), 50))
                .isCloseTo(10 * 50 + 2 * 100 + 2 * 50 + 100 + 50, offset(1e-6));
    }

    @Test
    void afterARestartTheRecordsReadSinceItAreTheBacklog() {
        history.record(T0, T0.plusSeconds(10), 1000);
        history.restarted(T0.plusSeconds(10));
        history.attemptStarted(T0.plusSeconds(12), 6000);
        history.record(T0.plusSeconds(12), T0.plusSeconds(14), 500);

        assertThat(history.recordsSince(T0.plusSeconds(5), T0.plusSeconds(14), 500))
                .as("the sources re-read everything since the checkpoint: 6,000 in the first 2 s, then 1,000")
                .isCloseTo(7000, offset(1e-6));
        assertThat(history.recordsSince(T0.plusSeconds(13), T0.plusSeconds(14), 500))
                .as("a checkpoint after the restart").isCloseTo(500, offset(1e-6));
    }

    @Test
    void forgetsSamplesOlderThanItsMemory() {
        history.record(T0, T0.plusSeconds(10), 1000);
        history.record(T0.plusSeconds(100), T0.plusSeconds(101), 10);

        assertThat(history.recordsSince(T0, T0.plusSeconds(101), 0)).as("the first segment is gone").isCloseTo(10,
                offset(1e-6));
    }
}
