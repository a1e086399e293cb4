package io.sr3.flink.testjob;

import javax.annotation.concurrent.ThreadSafe;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the operators of {@link BurstyTestJob} report about a run, keyed by run id: the schedule's
 * origin, end-to-end latencies, injected failures and when each restarted source caught up.
 * Static for the same reason as {@link RunRegistry} (MiniCluster only); {@link #remove} frees a run.
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
        private final ProcessingLog processing = new ProcessingLog();
        private final AtomicBoolean failureArmed = new AtomicBoolean();
        private final List<Long> failures = new CopyOnWriteArrayList<>();
        private final List<Long> sourceCaughtUp = new CopyOnWriteArrayList<>();

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

        /** Every processed record with its processing time, for latencies outside recovery windows. */
        public ProcessingLog processing() {
            return processing;
        }

        /** Makes the next record through the failure injector throw (once per call). */
        public void armFailure() {
            failureArmed.set(true);
        }

        /** Epoch millis of every injected failure, in order. */
        public List<Long> failures() {
            return List.copyOf(failures);
        }

        /**
         * The first moment after {@code failure} (epoch ms) at which a restarted source was back at
         * the present ({@link RearmableFailureInjector}), or 0 if none was yet.
         */
        public long sourceCaughtUpAfter(long failure) {
            for (long t : sourceCaughtUp) {
                if (t > failure) {
                    return t;
                }
            }
            return 0;
        }

        boolean claimFailure() {
            if (failureArmed.compareAndSet(true, false)) {
                failures.add(System.currentTimeMillis());
                return true;
            }
            return false;
        }

        void recordSourceCaughtUp(long when) {
            sourceCaughtUp.add(when);
        }
    }
}
