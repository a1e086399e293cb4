package io.sr3.flink.testjob;

import org.apache.flink.connector.datagen.source.GeneratorFunction;

/**
 * Emits record {@code i} of {@link StatefulTestJob#event} and publishes when record {@code i + 1}
 * is due in the {@link BurstSchedule}, for {@link ScheduleRateLimiterStrategy}, which holds the
 * source back until then.
 */
final class ScheduledEventGenerator implements GeneratorFunction<Long, Event> {

    private static final long serialVersionUID = 1L;

    private final String runId;
    private final BurstSchedule schedule;
    private final int keys;
    private final int payloadBytes;

    ScheduledEventGenerator(String runId, BurstSchedule schedule, int keys, int payloadBytes) {
        this.runId = runId;
        this.schedule = schedule;
        this.keys = keys;
        this.payloadBytes = payloadBytes;
    }

    @Override
    public Event map(Long index) {
        BurstyRuns.Run run = BurstyRuns.run(runId);
        run.setNextDueMillis((long) Math.ceil(run.originMillis() + schedule.dueOffsetMillis(index + 1)));
        return StatefulTestJob.event(index, keys, payloadBytes);
    }
}
