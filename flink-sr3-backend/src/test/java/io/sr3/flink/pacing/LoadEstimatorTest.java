package io.sr3.flink.pacing;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

/** Rates and ratios from two counter samples, and the outcomes that make the pacer wait or fall back. */
class LoadEstimatorTest {

    @Test
    void ratesRatiosAndCapacityFromTheTasksOwnTime() {
        JobCounters before = job(subtask(0, 0, 0, 0, 0), subtask(0, 0, 0, 0, 0), subtask(0, 0, 0, 0, 0));
        // 2 s of task time: the source emitted 4,000 records (2,000/s); keyed subtask 1 was busy 60%.
        JobCounters after = job(subtask(0, 4000, 400, 0, 1600), subtask(0, 0, 600, 200, 1200), subtask(1, 0, 1200, 0, 800));

        LoadEstimator.Load load = (LoadEstimator.Load) LoadEstimator.estimate(before, after);

        assertThat(load.inputRate()).isCloseTo(2000, offset(1e-9));
        assertThat(load.capacity()).isCloseTo(2000 / 0.6, offset(1e-6));
        assertThat(load.subtasks()).hasSize(3);
        assertThat(load.subtasks().get(1).busyRatio()).isCloseTo(0.3, offset(1e-9));
        assertThat(load.subtasks().get(1).backPressureRatio()).isCloseTo(0.1, offset(1e-9));
    }

    /** Two source subtasks, each over its own running time: 6,000 in 2 s plus 1,000 in 1 s. */
    @Test
    void theSourcesMeanRateSinceTheirStartIsTakenPerSubtask() {
        JobCounters counters = new JobCounters(List.of(
                new JobCounters.Vertex("s", "source", true, 2, List.of(new JobCounters.Subtask(0, 6000, 500, 500, 1000),
                        new JobCounters.Subtask(1, 1000, 100, 0, 900))),
                new JobCounters.Vertex("k", "keyed", false, 1, List.of(new JobCounters.Subtask(0, 99_999, 1, 0, 1)))));

        assertThat(counters.sourceRateSinceStart()).isEqualTo(4000);
        assertThat(counters.sourceRecords()).isEqualTo(7000);
    }

    @Test
    void aSubtaskWithoutMetricsIsMissing() {
        JobCounters.Vertex partial = new JobCounters.Vertex("k", "keyed", false, 2,
                List.of(new JobCounters.Subtask(0, 0, 1, 0, 1)));
        JobCounters current = new JobCounters(List.of(partial));

        assertThat(LoadEstimator.estimate(current, current)).isInstanceOf(LoadEstimator.Missing.class);
    }

    @Test
    void unchangedCountersAreNoNewSampleAndCountersGoingBackAreAReset() {
        JobCounters a = job(subtask(0, 10, 5, 0, 5), subtask(0, 0, 5, 0, 5), subtask(1, 0, 5, 0, 5));
        JobCounters restarted = job(subtask(0, 1, 1, 0, 1), subtask(0, 0, 1, 0, 1), subtask(1, 0, 1, 0, 1));

        assertThat(LoadEstimator.estimate(a, a)).isInstanceOf(LoadEstimator.NoNewSample.class);
        assertThat(LoadEstimator.estimate(a, restarted)).isInstanceOf(LoadEstimator.Reset.class);
        assertThat(LoadEstimator.estimate(null, a)).isInstanceOf(LoadEstimator.Reset.class);
    }

    /** One source subtask, two keyed subtasks (index from the argument's position). */
    private static JobCounters job(JobCounters.Subtask source, JobCounters.Subtask keyed0, JobCounters.Subtask keyed1) {
        return new JobCounters(List.of(
                new JobCounters.Vertex("s", "source", true, 1, List.of(source)),
                new JobCounters.Vertex("k", "keyed", false, 2, List.of(
                        new JobCounters.Subtask(0, keyed0.recordsOut(), keyed0.busyMs(), keyed0.backPressuredMs(), keyed0.idleMs()),
                        new JobCounters.Subtask(1, keyed1.recordsOut(), keyed1.busyMs(), keyed1.backPressuredMs(), keyed1.idleMs())))));
    }

    private static JobCounters.Subtask subtask(int index, long records, double busy, double backPressured, double idle) {
        return new JobCounters.Subtask(index, records, busy, backPressured, idle);
    }
}
