package io.sr3.flink.pacing;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The job's input rate over time, to count the records that arrived since a checkpoint: the
 * backlog a restore from it would replay. Counting them, instead of multiplying the age by the
 * current rate, keeps a burst that ended in the backlog of the quiet phase after it.
 *
 * <p>Each sample covers the time between two metric samples. Gaps (a missing metric) and times
 * before the first sample or beyond {@code memory} count at the rate the caller gives. After a
 * restart the sources re-read everything since the restored checkpoint, so from then on the
 * records read since the restart are the backlog of any checkpoint taken before it.
 */
@NotThreadSafe
final class InputHistory {

    private record Segment(Instant from, Instant to, double rate) {}

    private final Duration memory;
    private final Deque<Segment> segments = new ArrayDeque<>();
    /** The last restart: records before it were read again after it. */
    @Nullable private Instant restart;

    InputHistory(Duration memory) {
        this.memory = memory;
    }

    /** The job restarted at {@code at}; its sources start again from the restored checkpoint. */
    void restarted(Instant at) {
        segments.clear();
        restart = at;
    }

    /** The first counters of the attempt after a restart: its sources read {@code records} since then. */
    void attemptStarted(Instant now, long records) {
        if (restart != null && segments.isEmpty() && now.isAfter(restart)) {
            record(restart, now, records / seconds(restart, now));
        }
    }

    /** {@code rate} records/s arrived between {@code from} and {@code to}. */
    void record(Instant from, Instant to, double rate) {
        if (!to.isAfter(from)) {
            return;
        }
        segments.addLast(new Segment(from, to, rate));
        Instant oldest = to.minus(memory);
        while (segments.peekFirst().to().isBefore(oldest)) {
            segments.pollFirst();
        }
    }

    /** Records that arrived between {@code since} and {@code now}, with gaps counted at {@code gapRate}. */
    double recordsSince(Instant since, Instant now, double gapRate) {
        double records = 0;
        Instant covered = restart != null && restart.isAfter(since) ? restart : since;
        for (Segment s : segments) {
            if (!s.to().isAfter(covered)) {
                continue;
            }
            Instant from = s.from().isAfter(covered) ? s.from() : covered;
            Instant to = s.to().isBefore(now) ? s.to() : now;
            if (!to.isAfter(from)) {
                break;
            }
            records += gapRate * seconds(covered, from) + s.rate() * seconds(from, to);
            covered = to;
        }
        if (now.isAfter(covered)) {
            records += gapRate * seconds(covered, now);
        }
        return records;
    }

    private static double seconds(Instant from, Instant to) {
        return Math.max(0, Duration.between(from, to).toNanos() / 1e9);
    }
}
