package io.sr3.flink.pacing;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * When a job restarted, as its pacer sees it: the observed mean time between failures, and
 * whether counters are still the old attempt's, which Flink's metric store holds for a while
 * after a restart (taken for the new attempt's, they would end the replay at once and, once the
 * new attempt's counters replace them, look like a second restart).
 */
@NotThreadSafe
final class RestartClock {

    /** Restarts the observed MTBF is averaged over. */
    static final int MTBF_WINDOW = 5;

    /** When the job was first seen running, then each restart. */
    private final Deque<Instant> times = new ArrayDeque<>();
    @Nullable private Instant lastRestart;

    void seenRunning(Instant now) {
        if (times.isEmpty()) {
            times.add(now);
        }
    }

    void restarted(Instant at) {
        lastRestart = at;
        times.add(at);
        while (times.size() > MTBF_WINDOW + 1) {
            times.removeFirst();
        }
    }

    /** The last restart, or null before any. */
    @Nullable
    Instant lastRestart() {
        return lastRestart;
    }

    /**
     * Whether counters sampled at {@code now} are still the old attempt's, which Flink's metric
     * store holds for a while after a restart: a subtask of the new attempt cannot have run longer
     * than the time since the restart (plus {@code slack}, for a restart noticed late).
     */
    boolean fromBeforeLastRestart(JobCounters counters, Instant now, Duration slack) {
        return lastRestart != null
                && counters.longestRunningMs() > Duration.between(lastRestart, now).plus(slack).toMillis();
    }

    /** Mean time between the job's recent restarts, once two were seen; null before. */
    @Nullable
    Duration observedMtbf() {
        int restarts = times.size() - 1;
        if (restarts < 2) {
            return null;
        }
        return Duration.between(times.getFirst(), times.getLast()).dividedBy(restarts);
    }
}
