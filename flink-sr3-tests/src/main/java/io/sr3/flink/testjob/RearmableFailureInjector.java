package io.sr3.flink.testjob;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Passes records through and throws once each time the run was {@linkplain BurstyRuns.Run#armFailure() armed}.
 * Chained to the source, it also sees when a restarted source is back at the present: the first
 * record it passes at most {@code caughtUpMillis} after that record was due in the schedule. From
 * then on the replay backlog is drained, which is what the recovery-time model calls caught up.
 */
final class RearmableFailureInjector extends RichMapFunction<Event, Event> {

    private static final long serialVersionUID = 1L;

    private final String runId;
    private final BurstSchedule schedule;
    private final long caughtUpMillis;

    private transient BurstyRuns.Run run;
    private transient boolean caughtUp;

    RearmableFailureInjector(String runId, BurstSchedule schedule, long caughtUpMillis) {
        this.runId = runId;
        this.schedule = schedule;
        this.caughtUpMillis = caughtUpMillis;
    }

    @Override
    public void open(OpenContext openContext) {
        run = BurstyRuns.run(runId);
        caughtUp = getRuntimeContext().getTaskInfo().getAttemptNumber() == 0;
    }

    @Override
    public Event map(Event event) {
        if (run.claimFailure()) {
            throw new FailureInjector.InjectedFailureException("Injected failure of bursty run " + runId + " at record "
                    + event.index());
        }
        if (!caughtUp) {
            long now = System.currentTimeMillis();
            if (now - run.originMillis() - schedule.dueOffsetMillis(event.index()) <= caughtUpMillis) {
                caughtUp = true;
                run.recordSourceCaughtUp(now);
            }
        }
        return event;
    }
}
