package io.sr3.flink.testjob;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.util.Random;

/**
 * {@link KeyedStateFunction} (composed, so the results are exactly those of
 * {@link StatefulTestJob}) plus a fixed amount of work per record, and the end-to-end latency
 * of every record: from its due time in the {@link BurstSchedule} to the end of its processing.
 * The work is a {@link RecordWork}: a blocking wait or CPU time (Flink counts either as busy
 * time), and optionally a ballast of unchanging state written on a key's first record.
 */
final class LatencyTrackingStateFunction extends KeyedProcessFunction<Integer, Event, KeyResult> {

    private static final long serialVersionUID = 1L;

    private final KeyedStateFunction delegate;
    private final String runId;
    private final BurstSchedule schedule;
    private final RecordWork work;

    private transient ValueState<byte[]> ballast;
    private transient BurstyRuns.Run run;
    /** Keeps the result of CPU work alive, so the JIT cannot drop the work. */
    private transient long workResult;

    LatencyTrackingStateFunction(TestJobSpec spec, BurstSchedule schedule, RecordWork work) {
        this.delegate = new KeyedStateFunction(spec);
        this.runId = spec.runId();
        this.schedule = schedule;
        this.work = work;
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
        delegate.setRuntimeContext(getRuntimeContext());
        delegate.open(openContext);
        ballast = getRuntimeContext().getState(
                new ValueStateDescriptor<>("ballast", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
        run = BurstyRuns.run(runId);
    }

    @Override
    public void processElement(Event event, Context ctx, Collector<KeyResult> out) throws Exception {
        delegate.processElement(event, ctx, out);
        if (work.ballastBytesPerKey() > 0 && ballast.value() == null) {
            byte[] bytes = new byte[work.ballastBytesPerKey()];
            new Random(event.key()).nextBytes(bytes); // incompressible, like real profiles
            ballast.update(bytes);
        }
        workResult += work.perform();
        long now = System.currentTimeMillis();
        long latency = Math.round(now - run.originMillis() - schedule.dueOffsetMillis(event.index()));
        run.latencies().record(latency);
        run.processing().record(now, latency, event.index());
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
