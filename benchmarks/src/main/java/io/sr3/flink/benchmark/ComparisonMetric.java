package io.sr3.flink.benchmark;

import io.sr3.flink.harness.JobProbe.CheckpointRecord;
import io.sr3.flink.harness.Stats;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * One quantity {@link ComparisonReport} compares between backends: how to read it from one run
 * and from a backend's runs pooled, how to print it, and whether higher is better.
 */
record ComparisonMetric(String key, String title, boolean higherIsBetter, Unit unit,
        ToDoubleFunction<RunResult> perRun, ToDoubleFunction<List<RunResult>> pooled) {

    /** How a metric's values are printed. */
    enum Unit { RATE, MILLIS, BYTES, CPU_SECONDS }

    /** Every metric the report compares, in the order of its tables. */
    static List<ComparisonMetric> all() {
        return List.of(
                new ComparisonMetric("throughputRecordsPerSecond", "Throughput, rate-unlimited source, steady window (records/s)",
                        true, Unit.RATE, r -> r.throughput().recordsPerSecond(),
                        rs -> mean(rs, r -> r.throughput().recordsPerSecond())),
                new ComparisonMetric("throughputToFinishedRecordsPerSecond", "Throughput, the same run to FINISHED (records/s)",
                        true, Unit.RATE, r -> r.throughput().recordsPerSecondToFinished(),
                        rs -> mean(rs, r -> r.throughput().recordsPerSecondToFinished())),
                new ComparisonMetric("checkpointEndToEndMillisMedian", "Checkpoint duration, median end-to-end (ms)", false, Unit.MILLIS,
                        r -> r.checkpointDurations().median(), rs -> pooled(rs).median()),
                new ComparisonMetric("checkpointEndToEndMillisP99", "Checkpoint duration, p99 end-to-end (ms)", false, Unit.MILLIS,
                        r -> r.checkpointDurations().p99(), rs -> pooled(rs).p99()),
                new ComparisonMetric("checkpointEndToEndMillisMean", "Checkpoint duration, mean end-to-end (ms)", false, Unit.MILLIS,
                        r -> r.checkpointDurations().mean(), rs -> pooled(rs).mean()),
                new ComparisonMetric("checkpointLongestAsyncMillisMedian",
                        "Checkpoint: longest subtask asynchronous part (state upload), median (ms)", false, Unit.MILLIS,
                        r -> phase(List.of(r), CheckpointRecord::longestAsyncMillis).median(),
                        rs -> phase(rs, CheckpointRecord::longestAsyncMillis).median()),
                new ComparisonMetric("checkpointLongestSyncMillisMedian",
                        "Checkpoint: longest subtask synchronous part (RocksDB flush, hard links), median (ms)", false,
                        Unit.MILLIS, r -> phase(List.of(r), CheckpointRecord::longestSyncMillis).median(),
                        rs -> phase(rs, CheckpointRecord::longestSyncMillis).median()),
                new ComparisonMetric("cpuSecondsPerCheckpointedGiB", "CPU-seconds per checkpointed GiB (whole JVM, rate-limited phase)",
                        false, Unit.CPU_SECONDS, r -> r.cpu().secondsPerCheckpointedGiB(),
                        rs -> mean(rs, r -> r.cpu().secondsPerCheckpointedGiB())),
                new ComparisonMetric("checkpointStateSizeBytesMedian", "Checkpoint state size, median (full incremental state)",
                        false, Unit.BYTES, r -> r.checkpointStateSizes().median(),
                        rs -> mean(rs, r -> r.checkpointStateSizes().median())),
                new ComparisonMetric("checkpointedSizeBytesMean", "Uploaded per checkpoint, mean (incremental part)", false, Unit.BYTES,
                        r -> r.checkpointedSizes().mean(), rs -> mean(rs, r -> r.checkpointedSizes().mean())),
                new ComparisonMetric("failureToRunningMillis", "Task failure -> all subtasks RUNNING (ms)", false, Unit.MILLIS,
                        r -> r.taskFailure().toRunningMillis(), rs -> mean(rs, r -> r.taskFailure().toRunningMillis())),
                new ComparisonMetric("longestTaskRestoreMillis", "Task failure: longest subtask INITIALIZING (state download + open, ms)",
                        false, Unit.MILLIS, r -> r.taskFailure().longestTaskRestoreMillis(),
                        rs -> mean(rs, r -> r.taskFailure().longestTaskRestoreMillis())),
                new ComparisonMetric("failureToFirstCheckpointMillis", "Task failure -> first checkpoint completed after it (ms)",
                        false, Unit.MILLIS, r -> r.taskFailure().toFirstCheckpointMillis(),
                        rs -> mean(rs, r -> r.taskFailure().toFirstCheckpointMillis())),
                new ComparisonMetric("taskManagerLossToRunningMillis", "TaskManager loss -> all subtasks RUNNING (ms)", false,
                        Unit.MILLIS, r -> r.taskManagerLoss().toRunningMillis(),
                        rs -> mean(rs, r -> r.taskManagerLoss().toRunningMillis())),
                new ComparisonMetric("taskManagerLossLongestTaskRestoreMillis",
                        "TaskManager loss: longest subtask INITIALIZING (state download + open, ms)", false, Unit.MILLIS,
                        r -> r.taskManagerLoss().longestTaskRestoreMillis(),
                        rs -> mean(rs, r -> r.taskManagerLoss().longestTaskRestoreMillis())),
                new ComparisonMetric("taskManagerLossToFirstCheckpointMillis",
                        "TaskManager loss -> first checkpoint completed after it (ms)", false, Unit.MILLIS,
                        r -> r.taskManagerLoss().toFirstCheckpointMillis(),
                        rs -> mean(rs, r -> r.taskManagerLoss().toFirstCheckpointMillis())));
    }

    static double mean(List<RunResult> runs, ToDoubleFunction<RunResult> f) {
        return runs.stream().mapToDouble(f).average().orElse(Double.NaN);
    }

    private static Stats pooled(List<RunResult> runs) {
        return phase(runs, CheckpointRecord::endToEndMillis);
    }

    /** One part of the full-state checkpoints' durations, pooled over the runs. */
    private static Stats phase(List<RunResult> runs, ToLongFunction<CheckpointRecord> part) {
        List<Long> all = new ArrayList<>();
        for (RunResult r : runs) {
            for (CheckpointRecord c : r.fullStateCheckpoints()) {
                all.add(part.applyAsLong(c));
            }
        }
        return Stats.of(all);
    }

    /** {@code v} in this metric's unit, for a table cell. */
    String format(double v) {
        return switch (unit) {
            case RATE -> String.format("%,.0f", v);
            case MILLIS -> String.format("%,.0f ms", v);
            case BYTES -> Stats.bytes(v);
            case CPU_SECONDS -> String.format("%.1f CPU-s/GiB", v);
        };
    }
}
