package io.sr3.flink.testjob;

import javax.annotation.concurrent.ThreadSafe;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the operators of {@link BurstyTestJob} report about a run, keyed by run id: the schedule's
 * origin, end-to-end latencies, injected failures, restarts and when each restarted subtask caught
 * up. Static for the same reason as {@link RunRegistry} (MiniCluster only); {@link #remove} frees a run.
 */
@ThreadSafe
public final class BurstyRuns {

    private static final Map<String, Run> RUNS = new ConcurrentHashMap<>();

    private BurstyRuns() {}

    public static Run run(String runId) {
        return RUNS.computeIfAbsent(runId, id -> new Run());
    }

    public static void remove(String runId) {
        RUNS.remove(runId);
    }

    /** One run, over all its attempts. */
    @ThreadSafe
    public static final class Run {

        private final AtomicLong origin = new AtomicLong();
        private final AtomicLong nextDue = new AtomicLong();
        private final LatencyHistogram latencies = new LatencyHistogram();
        private final LatencyHistogram steadyLatencies = new LatencyHistogram();
        private final AtomicBoolean failureArmed = new AtomicBoolean();
        private final List<Long> failures = new CopyOnWriteArrayList<>();
        private final List<long[]> attemptStarts = new CopyOnWriteArrayList<>();
        private final Map<String, Long> caughtUp = new ConcurrentHashMap<>();

        /** Epoch millis at which the schedule started: set by the first source start, kept across failovers. */
        public long originMillis() {
            origin.compareAndSet(0, System.currentTimeMillis());
            return origin.get();
        }

        /** The origin if the source has started, else 0. */
        public long originIfStarted() {
            return origin.get();
        }

        /** When the source's next record is due (epoch millis); 0 before the first record. */
        long nextDueMillis() {
            return nextDue.get();
        }

        void setNextDueMillis(long millis) {
            nextDue.set(millis);
        }

        /** Latency from a record's due time to the end of its processing in the keyed operator. */
        public LatencyHistogram latencies() {
            return latencies;
        }

        /**
         * Latencies of records processed while no subtask attempt was catching up after a restart
         * (a subfamily of {@link #latencies()}): what checkpoints cost a running job.
         */
        public LatencyHistogram steadyLatencies() {
            return steadyLatencies;
        }

        /** Makes the next record through the failure injector throw (once per call). */
        public void armFailure() {
            failureArmed.set(true);
        }

        /** Epoch millis of every injected failure, in order. */
        public List<Long> failures() {
            return List.copyOf(failures);
        }

        /** The first time the keyed subtask {@code subtask} processed a caught-up record in {@code attempt}, or null. */
        public Long caughtUp(int subtask, int attempt) {
            return caughtUp.get(subtask + "/" + attempt);
        }

        /** (subtask, attempt, epoch millis) of every keyed subtask start. */
        public List<long[]> attemptStarts() {
            return List.copyOf(attemptStarts);
        }

        /** For reports: caught-up times by "subtask/attempt". */
        public Map<String, Long> caughtUpTimes() {
            return new TreeMap<>(caughtUp);
        }

        boolean claimFailure() {
            if (failureArmed.compareAndSet(true, false)) {
                failures.add(System.currentTimeMillis());
                return true;
            }
            return false;
        }

        void recordAttemptStart(int subtask, int attempt) {
            attemptStarts.add(new long[] {subtask, attempt, System.currentTimeMillis()});
        }

        void recordCaughtUp(int subtask, int attempt, long when) {
            caughtUp.putIfAbsent(subtask + "/" + attempt, when);
        }
    }
}
