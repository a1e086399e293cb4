package io.sr3.flink.benchmark;

import io.sr3.flink.harness.JobProbe.CheckpointRecord;
import io.sr3.flink.harness.Stats;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The raw numbers of one run (one backend, one round) of {@link BackendComparisonBenchmark}.
 *
 * @param backend {@link BackendComparisonBenchmark.Backend} label
 * @param round 1-based round; runs alternate backends within and across rounds
 * @param throughput the rate-unlimited phase
 * @param fullStateCheckpoints checkpoints of the rate-limited phase triggered after every key's
 *     state existed and before the injected failure: the checkpoint-duration sample
 * @param restoredCheckpointId the checkpoint the task failover restored, -1 if none
 * @param restoredStateSize its state size in bytes
 * @param taskFailure the restore after the injected task failure
 * @param taskManagerLoss the restore after the TaskManager with the most state instances was closed
 *     and a fresh one started
 * @param resultsExact whether both phases delivered exactly the expected per-key results
 * @param ringBytesPerNode for flink-sr3: bytes in each ring node's store at the failure (empty otherwise)
 * @param ringBytesWritten for flink-sr3: bytes sent to the ring as block writes (all replicas), whole run
 * @param cpu CPU use of the rate-limited phase from all subtasks RUNNING to the injected failure
 */
public record RunResult(
        String backend,
        int round,
        Throughput throughput,
        List<CheckpointRecord> fullStateCheckpoints,
        long restoredCheckpointId,
        long restoredStateSize,
        Recovery taskFailure,
        Recovery taskManagerLoss,
        boolean resultsExact,
        long[] ringBytesPerNode,
        long ringBytesWritten,
        CpuUse cpu) {

    /**
     * The rate-unlimited phase.
     *
     * @param records records of the phase
     * @param millis from the last subtask RUNNING to the job FINISHED (end-of-input emission and the
     *     final checkpoint Flink waits for included)
     * @param steadyRecords records processed in the steady window: from the sample where every key's
     *     state exists to the one where 95% of the input is processed
     * @param steadyMillis the window's length
     * @param checkpoints checkpoints completed during the phase
     */
    public record Throughput(long records, long millis, long steadyRecords, long steadyMillis,
            List<CheckpointRecord> checkpoints) {

        public double recordsPerSecond() {
            return steadyRecords * 1000.0 / steadyMillis;
        }

        public double recordsPerSecondToFinished() {
            return records * 1000.0 / millis;
        }
    }

    /**
     * One restore.
     *
     * @param toRunningMillis from the failure to the last subtask RUNNING again
     * @param longestTaskRestoreMillis the longest INITIALIZING phase (state download and RocksDB open) of a subtask
     * @param toFirstCheckpointMillis from the failure to the completion of the first checkpoint after the restore
     */
    public record Recovery(long toRunningMillis, long longestTaskRestoreMillis, long toFirstCheckpointMillis) {

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("toRunningMillis", toRunningMillis);
            m.put("longestTaskRestoreMillis", longestTaskRestoreMillis);
            m.put("toFirstCheckpointMillis", toFirstCheckpointMillis);
            return m;
        }
    }

    /**
     * CPU use of a window of the rate-limited phase.
     *
     * @param cpuNanos CPU time of the whole JVM (job, storage, kernel time, garbage collector)
     * @param checkpointedBytes bytes uploaded (checkpointed size) by the checkpoints completed in the window
     * @param secondsByGroup CPU-seconds per thread group ({@link io.sr3.flink.harness.ThreadCpu})
     * @param secondsByThreadName CPU-seconds per thread name, digits as {@code #}, the largest first
     * @param gcPauseMillis time the garbage collectors report collecting in the window
     */
    public record CpuUse(long cpuNanos, long checkpointedBytes, Map<String, Double> secondsByGroup,
            Map<String, Double> secondsByThreadName, long gcPauseMillis) {

        /**
         * CPU-seconds per GiB checkpointed. The job's own work is the same for every backend, so
         * differences between backends are what their checkpoints cost.
         */
        public double secondsPerCheckpointedGiB() {
            return perCheckpointedGiB(cpuNanos / 1e9);
        }

        public double perCheckpointedGiB(double value) {
            return value / (checkpointedBytes / (double) (1L << 30));
        }
    }

    public Stats checkpointDurations() {
        return Stats.of(fullStateCheckpoints.stream().map(CheckpointRecord::endToEndMillis).toList());
    }

    public Stats checkpointStateSizes() {
        return Stats.of(fullStateCheckpoints.stream().map(CheckpointRecord::stateSize).toList());
    }

    public Stats checkpointedSizes() {
        return Stats.of(fullStateCheckpoints.stream().map(CheckpointRecord::checkpointedSize).toList());
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("backend", backend);
        m.put("round", round);
        m.put("resultsExact", resultsExact);
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("records", throughput.records());
        t.put("millis", throughput.millis());
        t.put("recordsPerSecondToFinished", throughput.recordsPerSecondToFinished());
        t.put("steadyRecords", throughput.steadyRecords());
        t.put("steadyMillis", throughput.steadyMillis());
        t.put("recordsPerSecond", throughput.recordsPerSecond());
        t.put("checkpoints", checkpoints(throughput.checkpoints()));
        m.put("throughput", t);
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("count", fullStateCheckpoints.size());
        c.put("endToEndMillisMean", checkpointDurations().mean());
        c.put("endToEndMillisMedian", checkpointDurations().median());
        c.put("endToEndMillisP99", checkpointDurations().p99());
        c.put("cpuNanos", cpu.cpuNanos());
        c.put("checkpointedBytes", cpu.checkpointedBytes());
        c.put("cpuSecondsPerCheckpointedGiB", cpu.secondsPerCheckpointedGiB());
        c.put("cpuSecondsByThreadGroup", cpu.secondsByGroup());
        c.put("cpuSecondsByThreadName", cpu.secondsByThreadName());
        c.put("gcPauseMillis", cpu.gcPauseMillis());
        c.put("stateSizeBytesMedian", checkpointStateSizes().median());
        c.put("checkpointedSizeBytesMean", checkpointedSizes().mean());
        c.put("checkpoints", checkpoints(fullStateCheckpoints));
        m.put("checkpointing", c);
        Map<String, Object> r = taskFailure.toMap();
        r.put("restoredCheckpointId", restoredCheckpointId);
        r.put("restoredStateSizeBytes", restoredStateSize);
        m.put("taskFailure", r);
        m.put("taskManagerLoss", taskManagerLoss.toMap());
        if (ringBytesPerNode.length > 0) {
            Map<String, Object> ring = new LinkedHashMap<>();
            ring.put("bytesPerNodeAtFailure", ringBytesPerNode);
            ring.put("bytesWritten", ringBytesWritten);
            m.put("ring", ring);
        }
        return m;
    }

    private static List<Map<String, Object>> checkpoints(List<CheckpointRecord> records) {
        List<Map<String, Object>> list = new ArrayList<>();
        for (CheckpointRecord c : records) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", c.id());
            m.put("endToEndMillis", c.endToEndMillis());
            m.put("longestSyncMillis", c.longestSyncMillis());
            m.put("longestAsyncMillis", c.longestAsyncMillis());
            m.put("stateSizeBytes", c.stateSize());
            m.put("checkpointedSizeBytes", c.checkpointedSize());
            list.add(m);
        }
        return list;
    }
}
