package io.sr3.flink.testjob;

import javax.annotation.concurrent.ThreadSafe;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the operators of {@link StatefulTestJob} report about a run, keyed by run id.
 *
 * <p>Static on purpose (test-only state): in a MiniCluster the job's operators and the test share
 * this JVM, and the operators are serialized copies that cannot hand anything back otherwise.
 * Use a fresh run id per run; {@link #remove} frees one.
 */
@ThreadSafe
public final class RunRegistry {

    private static final Map<String, Run> RUNS = new ConcurrentHashMap<>();

    private RunRegistry() {}

    /** The run with this id, created empty on first use. */
    public static Run run(String runId) {
        return RUNS.computeIfAbsent(runId, Run::new);
    }

    public static void remove(String runId) {
        RUNS.remove(runId);
    }

    /** One logical run: all its attempts and resubmissions. */
    @ThreadSafe
    public static final class Run {

        private final String runId;
        private final Map<Integer, KeyResult> results = new ConcurrentHashMap<>();
        private final Map<Integer, AtomicInteger> emissions = new ConcurrentHashMap<>();
        private final List<String> starts = new CopyOnWriteArrayList<>();
        private final AtomicInteger restoredStarts = new AtomicInteger();
        private final AtomicLong completedCheckpoints = new AtomicLong();
        private final AtomicLong latestCompletedCheckpoint = new AtomicLong(-1);
        private final AtomicBoolean armed = new AtomicBoolean();
        private final AtomicBoolean failureInjected = new AtomicBoolean();
        private final LongAdder processedRecords = new LongAdder();

        private Run(String runId) {
            this.runId = runId;
        }

        public String runId() {
            return runId;
        }

        /** The latest result per key. */
        public Map<Integer, KeyResult> results() {
            return new TreeMap<>(results);
        }

        /** How many results each key emitted: exactly 1 for a correct run that finished. */
        public Map<Integer, Integer> emissions() {
            Map<Integer, Integer> copy = new TreeMap<>();
            emissions.forEach((key, count) -> copy.put(key, count.get()));
            return copy;
        }

        /** Total results emitted, duplicates included. */
        public int totalEmissions() {
            return emissions.values().stream().mapToInt(AtomicInteger::get).sum();
        }

        /** Parallel instances of the failure injector that started from a checkpoint or savepoint. */
        public int restoredStarts() {
            return restoredStarts.get();
        }

        /** "subtask/attempt restored=bool" for every instance start, in order: for failure messages. */
        public List<String> starts() {
            return List.copyOf(starts);
        }

        /** Checkpoint-complete notifications received by injector instances (one per instance and checkpoint). */
        public long completedCheckpointNotifications() {
            return completedCheckpoints.get();
        }

        /** Highest checkpoint id reported complete to an injector instance, -1 if none. */
        public long latestCompletedCheckpoint() {
            return latestCompletedCheckpoint.get();
        }

        /**
         * Records the keyed-state operator has processed so far, over all subtasks and attempts
         * (records replayed after a restore count again): benchmarks sample it for a throughput
         * over a window of their choosing.
         */
        public long processedRecords() {
            return processedRecords.sum();
        }

        /** Lets a {@link TestJobSpec.FailureMode#WHEN_ARMED} injector throw. */
        public void armFailure() {
            armed.set(true);
        }

        public boolean failureInjected() {
            return failureInjected.get();
        }

        void recordResult(KeyResult result) {
            results.put(result.key(), result);
            emissions.computeIfAbsent(result.key(), k -> new AtomicInteger()).incrementAndGet();
        }

        void recordProcessed() {
            processedRecords.increment();
        }

        void recordStart(int subtask, int attempt, boolean restored) {
            starts.add(subtask + "/" + attempt + " restored=" + restored);
            if (restored) {
                restoredStarts.incrementAndGet();
            }
        }

        void recordCheckpointComplete(long checkpointId) {
            completedCheckpoints.incrementAndGet();
            latestCompletedCheckpoint.accumulateAndGet(checkpointId, Math::max);
        }

        boolean armed() {
            return armed.get();
        }

        /** True for exactly one caller per run. */
        boolean claimFailure() {
            return failureInjected.compareAndSet(false, true);
        }

        @Override
        public String toString() {
            return "Run[" + runId + ", starts " + starts + ", checkpoint notifications " + completedCheckpoints
                    + ", failure injected " + failureInjected + ", emissions " + emissions() + "]";
        }
    }
}
