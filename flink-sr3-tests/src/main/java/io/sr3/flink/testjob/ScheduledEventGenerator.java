package io.sr3.flink.testjob;

import org.apache.flink.connector.datagen.source.GeneratorFunction;

/**
 * Emits record {@code i} of {@link StatefulTestJob#event} and publishes when record {@code i + 1}
 * is due in the {@link BurstSchedule}, for {@link ScheduleRateLimiterStrategy}, which holds the
 * source back until then.
 *
 * <p>The schedule starts at a fixed epoch time when one is given: that holds across processes,
 * so a source restarted on another TaskManager sees the backlog that accumulated while it was
 * down. Otherwise it starts when the run's source first starts in this JVM ({@link BurstyRuns}).
 */
final class ScheduledEventGenerator implements GeneratorFunction<Long, Event> {

    private static final long serialVersionUID = 1L;

    private final String runId;
    private final BurstSchedule schedule;
    private final int keys;
    private final int payloadBytes;
    /** Epoch millis at which the schedule starts, or 0 for the run's first source start in this JVM. */
    private final long originMillis;

    ScheduledEventGenerator(String runId, BurstSchedule schedule, int keys, int payloadBytes) {
        this(runId, schedule, keys, payloadBytes, 0);
    }

    ScheduledEventGenerator(String runId, BurstSchedule schedule, int keys, int payloadBytes, long originMillis) {
        if (originMillis < 0) {
            throw new IllegalArgumentException("originMillis must be >= 0 (0: first source start), was " + originMillis);
        }
        this.runId = runId;
        this.schedule = schedule;
        this.keys = keys;
        this.payloadBytes = payloadBytes;
        this.originMillis = originMillis;
    }

    @Override
    public Event map(Long index) {
        BurstyRuns.Run run = BurstyRuns.run(runId);
        long origin = originMillis > 0 ? originMillis : run.originMillis();
        run.setNextDueMillis((long) Math.ceil(origin + schedule.dueOffsetMillis(index + 1)));
        return StatefulTestJob.event(index, keys, payloadBytes);
    }
}
