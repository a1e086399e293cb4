package io.sr3.flink.testjob;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * A scripted input rate for {@link BurstyTestJob}: phases of constant rate, one after the other.
 * Record {@code i} becomes due (arrives, like a record appended to a log) at
 * {@link #dueOffsetMillis(long)} after the run's origin; a source that is behind (after a
 * failover) reads due records at full speed until it has caught up.
 *
 * @param phases the phases in order
 */
public record BurstSchedule(List<Phase> phases) implements Serializable {

    private static final long serialVersionUID = 1L;

    /**
     * One phase.
     *
     * @param name for reports ("base", "burst", ...)
     * @param millis how long it lasts
     * @param recordsPerSecond its input rate
     */
    public record Phase(String name, long millis, double recordsPerSecond) implements Serializable {

        private static final long serialVersionUID = 1L;

        public Phase {
            if (millis < 1 || !(recordsPerSecond > 0)) {
                throw new IllegalArgumentException("Phase " + name + " needs a positive length and rate, was " + millis
                        + " ms at " + recordsPerSecond + "/s");
            }
        }

        long records() {
            return (long) Math.floor(millis * recordsPerSecond / 1000.0);
        }
    }

    public BurstSchedule {
        phases = List.copyOf(phases);
        if (phases.isEmpty()) {
            throw new IllegalArgumentException("A schedule needs at least one phase");
        }
    }

    public static BurstSchedule of(Phase... phases) {
        return new BurstSchedule(List.of(phases));
    }

    /** Every record of every phase. */
    public long records() {
        long total = 0;
        for (Phase p : phases) {
            total += p.records();
        }
        return total;
    }

    /** Length of the whole schedule. */
    public long millis() {
        long total = 0;
        for (Phase p : phases) {
            total += p.millis();
        }
        return total;
    }

    /** When record {@code index} is due, in milliseconds after the origin. */
    public double dueOffsetMillis(long index) {
        long first = 0;
        long start = 0;
        for (Phase p : phases) {
            long n = p.records();
            if (index < first + n) {
                return start + (index - first) * 1000.0 / p.recordsPerSecond();
            }
            first += n;
            start += p.millis();
        }
        return start;
    }

    /** The phase running {@code offsetMillis} after the origin, or null after the end. */
    public Phase phaseAt(double offsetMillis) {
        long start = 0;
        for (Phase p : phases) {
            if (offsetMillis < start + p.millis()) {
                return offsetMillis < start ? null : p;
            }
            start += p.millis();
        }
        return null;
    }

    /** [start, end) offsets of each phase, in order. */
    public List<long[]> phaseBounds() {
        List<long[]> bounds = new ArrayList<>();
        long start = 0;
        for (Phase p : phases) {
            bounds.add(new long[] {start, start + p.millis()});
            start += p.millis();
        }
        return bounds;
    }
}
