package io.sr3.flink.pacing;

import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** How {@link JobObservation} reads Flink's restart count. */
class JobObservationTest {

    private static final PacingSettings SETTINGS = new PacingSettings(Duration.ofSeconds(30), Duration.ofSeconds(2),
            Duration.ofHours(1), 100L << 20, "http://127.0.0.1:1", Duration.ofSeconds(1), Duration.ofSeconds(5),
            Duration.ofMinutes(10));

    @Test
    void countingStartsAtTheFirstCountSeenAndSkipsPollsWithout() {
        JobObservation clock = new JobObservation("job", SETTINGS, Clock.systemUTC());
        assertThat(clock.countWentUp(JobView.UNKNOWN_RESTARTS)).isFalse();
        assertThat(clock.countingRestarts()).as("no count seen yet").isFalse();

        assertThat(clock.countWentUp(4)).as("restarts before the pacer came").isFalse();
        assertThat(clock.countingRestarts()).isTrue();
        assertThat(clock.countWentUp(JobView.UNKNOWN_RESTARTS)).isFalse();
        assertThat(clock.countWentUp(4)).isFalse();
        assertThat(clock.countWentUp(5)).isTrue();
        assertThat(clock.countWentUp(5)).as("counted once").isFalse();
    }

    /** After a JobManager failover the new scheduler counts from zero: its first restart still counts. */
    @Test
    void aCountThatGoesBackIsANewJobManagersAndCountingGoesOnFromIt() {
        JobObservation clock = new JobObservation("job", SETTINGS, Clock.systemUTC());
        clock.countWentUp(7);

        assertThat(clock.countWentUp(0)).isFalse();
        assertThat(clock.countWentUp(1)).isTrue();
    }
}
