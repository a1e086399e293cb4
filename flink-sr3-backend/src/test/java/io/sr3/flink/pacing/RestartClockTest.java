package io.sr3.flink.pacing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How {@link RestartClock} reads Flink's restart count. */
class RestartClockTest {

    @Test
    void countingStartsAtTheFirstCountSeenAndSkipsPollsWithout() {
        RestartClock clock = new RestartClock();
        assertThat(clock.countWentUp(JobView.UNKNOWN_RESTARTS)).isFalse();
        assertThat(clock.counting()).as("no count seen yet").isFalse();

        assertThat(clock.countWentUp(4)).as("restarts before the pacer came").isFalse();
        assertThat(clock.counting()).isTrue();
        assertThat(clock.countWentUp(JobView.UNKNOWN_RESTARTS)).isFalse();
        assertThat(clock.countWentUp(4)).isFalse();
        assertThat(clock.countWentUp(5)).isTrue();
        assertThat(clock.countWentUp(5)).as("counted once").isFalse();
    }

    /** After a JobManager failover the new scheduler counts from zero: its first restart still counts. */
    @Test
    void aCountThatGoesBackIsANewJobManagersAndCountingGoesOnFromIt() {
        RestartClock clock = new RestartClock();
        clock.countWentUp(7);

        assertThat(clock.countWentUp(0)).isFalse();
        assertThat(clock.countWentUp(1)).isTrue();
    }
}
