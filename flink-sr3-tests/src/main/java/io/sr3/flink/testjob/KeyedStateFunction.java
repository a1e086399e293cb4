package io.sr3.flink.testjob;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The stateful heart of {@link StatefulTestJob}; per key it keeps:
 * <ul>
 *   <li>ValueState {@code count}: records seen;
 *   <li>ListState {@code pending}: values not yet folded, folded into ValueState {@code sum} by an
 *       event-time timer at the end of each {@code windowMillis} period and at the end of input;
 *   <li>MapState {@code payloads}: slot -> XOR of the payloads of the key's records in that slot
 *       (the part that scales with {@link TestJobSpec#payloadBytes()}).
 * </ul>
 * The result is emitted by an event-time timer at {@link #FINAL_TIMER}, which only the final
 * watermark (end of input) reaches. Every step is order-independent, so the result does not
 * depend on how records of different source splits interleave or when timers fire.
 */
final class KeyedStateFunction extends KeyedProcessFunction<Integer, Event, KeyResult> {

    private static final long serialVersionUID = 1L;

    /** Fired only by the final watermark ({@code Long.MAX_VALUE}) at the end of input. */
    static final long FINAL_TIMER = Long.MAX_VALUE - 1;

    private final TestJobSpec spec;

    private transient ValueState<Long> count;
    private transient ValueState<Long> sum;
    private transient ListState<Long> pending;
    private transient MapState<Integer, byte[]> payloads;
    private transient RunRegistry.Run run;

    KeyedStateFunction(TestJobSpec spec) {
        this.spec = spec;
    }

    @Override
    public void open(OpenContext openContext) {
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        sum = getRuntimeContext().getState(new ValueStateDescriptor<>("sum", Types.LONG));
        pending = getRuntimeContext().getListState(new ListStateDescriptor<>("pending", Types.LONG));
        payloads = getRuntimeContext().getMapState(
                new MapStateDescriptor<>("payloads", Types.INT, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
        run = RunRegistry.run(spec.runId());
    }

    @Override
    public void processElement(Event event, Context ctx, Collector<KeyResult> out) throws Exception {
        run.recordProcessed();
        count.update(orZero(count.value()) + 1);
        pending.add(event.value());

        int slot = StatefulTestJob.slot(event.index(), spec);
        byte[] current = payloads.get(slot);
        byte[] next = current == null ? new byte[event.payload().length] : current.clone();
        byte[] payload = event.payload();
        for (int i = 0; i < payload.length; i++) {
            next[i] ^= payload[i];
        }
        payloads.put(slot, next);

        long windowEnd = (event.index() / spec.windowMillis()) * spec.windowMillis() + spec.windowMillis() - 1;
        ctx.timerService().registerEventTimeTimer(windowEnd);
        ctx.timerService().registerEventTimeTimer(FINAL_TIMER);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<KeyResult> out) throws Exception {
        long folded = orZero(sum.value());
        for (Long value : pending.get()) {
            folded += value;
        }
        sum.update(folded);
        pending.clear();
        if (timestamp == FINAL_TIMER) {
            SortedMap<Integer, byte[]> slots = new TreeMap<>();
            for (Map.Entry<Integer, byte[]> entry : payloads.entries()) {
                slots.put(entry.getKey(), entry.getValue());
            }
            out.collect(new KeyResult(ctx.getCurrentKey(), orZero(count.value()), folded,
                    StatefulTestJob.checksum(slots)));
        }
    }

    private static long orZero(Long value) {
        return value == null ? 0L : value;
    }
}
