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
 *
 * <p>A restart is known from Flink's own restart count ({@code numRestarts}) once the job reports
 * it. Only before that do counters that go back stand for one: the metric store fills in a new
 * attempt subtask by subtask, so its counters can go back without a restart, or never be seen
 * going back across one (a poll with a subtask missing in between).
 */
@NotThreadSafe
final class RestartClock {

    /** Restarts the observed MTBF is averaged over. */
    static final int MTBF_WINDOW = 5;

    /** When the job was first seen running, then each restart. */
    private final Deque<Instant> times = new ArrayDeque<>();
    @Nullable private Instant lastRestart;
    /** A restart the job was seen in, while the new attempt's counters have not shown up yet. */
    @Nullable private Instant awaitingNewAttempt;
    /** Flink's restart count at the last poll that had it; {@link JobView#UNKNOWN_RESTARTS} before. */
    private long restartCount = JobView.UNKNOWN_RESTARTS;

    void seenRunning(Instant now) {
        if (times.isEmpty()) {
            times.add(now);
        }
    }

    /**
     * The job restarted at {@code at}.
     *
     * @param seenRestarting the job was seen restarting (not only its counters going back): until
     *     the new attempt's counters show up, Flink's metric store may return the old attempt's
     */
    void restarted(Instant at, boolean seenRestarting) {
        lastRestart = at;
        awaitingNewAttempt = seenRestarting ? at : null;
        times.add(at);
        while (times.size() > MTBF_WINDOW + 1) {
            times.removeFirst();
        }
    }

    /**
     * Takes Flink's restart count of a poll ({@link JobView#UNKNOWN_RESTARTS} when it had none)
     * and answers whether it went up since the last poll that had one. The first count seen is
     * where counting starts: restarts before the pacer came are none of its business. A count
     * that goes back is a new JobManager's (after a JobManager failover the scheduler counts from
     * zero again): counting goes on from it.
     */
    boolean countWentUp(long count) {
        if (count == JobView.UNKNOWN_RESTARTS) {
            return false;
        }
        boolean up = restartCount != JobView.UNKNOWN_RESTARTS && count > restartCount;
        restartCount = count;
        return up;
    }

    /** Whether restarts are known from Flink's restart count, so counters going back are none. */
    boolean counting() {
        return restartCount != JobView.UNKNOWN_RESTARTS;
    }

    /** The last restart, or null before any. */
    @Nullable
    Instant lastRestart() {
        return lastRestart;
    }

    /**
     * Whether counters sampled at {@code now} are still the old attempt's, which Flink's metric
     * store holds for a while after a restart: a subtask of the new attempt cannot have run longer
     * than the time since the restart (plus {@code slack}, for a restart noticed late). Checked
     * only after a restart the job was seen in, until the first counters of the new attempt, and
     * for at most {@code window}: a check that misfired must not blind the pacer.
     */
    boolean fromBeforeLastRestart(JobCounters counters, Instant now, Duration slack, Duration window) {
        if (awaitingNewAttempt == null) {
            return false;
        }
        Duration since = Duration.between(awaitingNewAttempt, now);
        if (since.compareTo(window) <= 0 && counters.longestRunningMs() > since.plus(slack).toMillis()) {
            return true;
        }
        awaitingNewAttempt = null;
        return false;
    }

    /** Whether {@code current} started later than {@code previous}: its longest-running subtask ran for less time. */
    static boolean newAttempt(JobCounters previous, JobCounters current) {
        return current.longestRunningMs() < previous.longestRunningMs();
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
