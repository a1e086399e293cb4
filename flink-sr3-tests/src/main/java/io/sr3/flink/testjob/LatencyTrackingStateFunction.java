package io.sr3.flink.testjob;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * {@link KeyedStateFunction} (composed, so the results are exactly those of
 * {@link StatefulTestJob}) plus a fixed amount of work per record, and the end-to-end latency
 * of every record: from its due time in the {@link BurstSchedule} to the end of its processing.
 * The work is a {@link RecordWork}: a blocking wait or CPU time; Flink counts either as busy time.
 * A restarted subtask reports the first record it processes with a latency of at most
 * {@code caughtUpMillis}: the moment it caught up.
 */
final class LatencyTrackingStateFunction extends KeyedProcessFunction<Integer, Event, KeyResult> {

    private static final long serialVersionUID = 1L;

    private final KeyedStateFunction delegate;
    private final String runId;
    private final BurstSchedule schedule;
    private final RecordWork work;
    private final long caughtUpMillis;

    private transient BurstyRuns.Run run;
    private transient int subtask;
    private transient int attempt;
    private transient boolean caughtUp;
    /** Keeps the result of CPU work alive, so the JIT cannot drop the work. */
    private transient long workResult;

    LatencyTrackingStateFunction(TestJobSpec spec, BurstSchedule schedule, RecordWork work, long caughtUpMillis) {
        this.delegate = new KeyedStateFunction(spec);
        this.runId = spec.runId();
        this.schedule = schedule;
        this.work = work;
        this.caughtUpMillis = caughtUpMillis;
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        delegate.setRuntimeContext(getRuntimeContext());
        delegate.open(openContext);
        run = BurstyRuns.run(runId);
        subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        caughtUp = attempt == 0;
        run.recordAttemptStart(subtask, attempt);
    }

    @Override
    public void processElement(Event event, Context ctx, Collector<KeyResult> out) throws Exception {
        delegate.processElement(event, ctx, out);
        workResult += work.perform();
        long now = System.currentTimeMillis();
        long latency = Math.round(now - run.originMillis() - schedule.dueOffsetMillis(event.index()));
        run.latencies().record(latency);
        if (!caughtUp && latency <= caughtUpMillis) {
            caughtUp = true;
            run.recordCaughtUp(subtask, attempt, now);
        }
        if (caughtUp) {
            run.steadyLatencies().record(latency);
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<KeyResult> out) throws Exception {
        delegate.onTimer(timestamp, ctx, out);
    }

    @Override
    public void close() throws Exception {
        delegate.close();
    }
}
