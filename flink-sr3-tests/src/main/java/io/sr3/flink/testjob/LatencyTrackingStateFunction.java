package io.sr3.flink.testjob;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.util.concurrent.locks.LockSupport;

/**
 * {@link KeyedStateFunction} (composed, so the results are exactly those of
 * {@link StatefulTestJob}) plus a fixed amount of work per record, and the end-to-end latency
 * of every record: from its due time in the {@link BurstSchedule} to the end of its processing.
 * The work is a blocking wait of {@code workMicros} (like a synchronous lookup per record): Flink
 * counts it as busy time, so the job's capacity is predictable ({@code 1e6 / workMicros}
 * records/s per subtask) without loading the CPU of a shared machine.
 * A restarted subtask reports the first record it processes with a latency of at most
 * {@code caughtUpMillis}: the moment it caught up.
 */
final class LatencyTrackingStateFunction extends KeyedProcessFunction<Integer, Event, KeyResult> {

    private static final long serialVersionUID = 1L;

    private final KeyedStateFunction delegate;
    private final String runId;
    private final BurstSchedule schedule;
    private final long workNanos;
    private final long caughtUpMillis;

    private transient BurstyRuns.Run run;
    private transient int subtask;
    private transient int attempt;
    private transient boolean caughtUp;

    LatencyTrackingStateFunction(TestJobSpec spec, BurstSchedule schedule, long workMicros, long caughtUpMillis) {
        this.delegate = new KeyedStateFunction(spec);
        this.runId = spec.runId();
        this.schedule = schedule;
        this.workNanos = workMicros * 1000;
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
        long workUntil = System.nanoTime() + workNanos;
        for (long left = workNanos; left > 0; left = workUntil - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
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
