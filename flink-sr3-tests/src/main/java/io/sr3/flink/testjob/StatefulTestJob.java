package io.sr3.flink.testjob;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * A deterministic, checkable stateful streaming job for tests, demos and benchmarks.
 *
 * <pre>
 *   DataGeneratorSource (rate-limited, record i derived from i alone, event time i ms)
 *     -> FailureInjector (optional: throws once per run after a completed checkpoint)
 *     -> keyBy(i % keys)
 *     -> KeyedStateFunction (ValueState, ListState, MapState, event-time timers)
 *     -> one KeyResult per key, emitted by the final watermark at the end of input
 * </pre>
 *
 * <p>{@link #expectedResults} computes the exact per-key results in plain Java from the
 * {@link TestJobSpec}, so a run is correct if and only if it delivered exactly those results,
 * each exactly once ({@link RunRegistry.Run#emissions()}). Lost records, records applied twice and
 * state restored wrongly all change a result.
 *
 * <p>Usage in a MiniCluster test:
 * <pre>{@code
 * TestJobSpec spec = TestJobSpec.of("run-1").withFailure(FailureMode.AFTER_CHECKPOINT, 500);
 * StatefulTestJob.addToEnvironment(env, spec);          // source ... -> RegistrySink
 * env.execute();
 * assertThat(RunRegistry.run("run-1").results()).isEqualTo(StatefulTestJob.expectedResults(spec));
 * }</pre>
 * Jobs on real clusters (other JVMs) use {@link #build} and a sink of their own.
 */
public final class StatefulTestJob {

    /** Operator uids, stable so that savepoints and rescaled restores map state back. */
    public static final String SOURCE_UID = "sr3-test-source";
    public static final String INJECTOR_UID = "sr3-test-failure-injector";
    public static final String STATE_UID = "sr3-test-keyed-state";
    public static final String SINK_UID = "sr3-test-sink";

    private StatefulTestJob() {}

    /** Adds the job to {@code env}, from source to the per-key results, without a sink. */
    public static DataStream<KeyResult> build(StreamExecutionEnvironment env, TestJobSpec spec) {
        return build(env, spec, "");
    }

    /**
     * {@link #build} with {@code suffix} appended to every uid and name: several independent
     * copies of the job in one job graph (operators with different state sizes and rates).
     */
    public static DataStream<KeyResult> build(StreamExecutionEnvironment env, TestJobSpec spec, String suffix) {
        RateLimiterStrategy rateLimit = spec.recordsPerSecond() > 0
                ? RateLimiterStrategy.perSecond(spec.recordsPerSecond())
                : RateLimiterStrategy.noOp();
        final int keys = spec.keys();
        final int payloadBytes = spec.payloadBytes();
        DataGeneratorSource<Event> source = new DataGeneratorSource<>(
                index -> event(index, keys, payloadBytes), spec.records(), rateLimit, TypeInformation.of(Event.class));
        WatermarkStrategy<Event> watermarks = WatermarkStrategy.<Event>forMonotonousTimestamps()
                .withTimestampAssigner((event, previous) -> event.index());
        return env.fromSource(source, watermarks, "sr3-test-source" + suffix).uid(SOURCE_UID + suffix)
                .map(new FailureInjector(spec)).uid(INJECTOR_UID + suffix).name("failure-injector" + suffix)
                .keyBy(Event::key)
                .process(new KeyedStateFunction(spec)).uid(STATE_UID + suffix).name("keyed-state" + suffix);
    }

    /** {@link #build} plus a {@link RegistrySink} for {@code spec.runId()}: for jobs in this JVM. */
    public static void addToEnvironment(StreamExecutionEnvironment env, TestJobSpec spec) {
        build(env, spec).sinkTo(new RegistrySink(spec.runId())).uid(SINK_UID).name("registry-sink");
    }

    /** The record at {@code index}: a pure function of its arguments. */
    public static Event event(long index, int keys, int payloadBytes) {
        return new Event(index, (int) (index % keys), value(index), payload(index, payloadBytes));
    }

    /** The exact result the job must emit for each key that received at least one record. */
    public static Map<Integer, KeyResult> expectedResults(TestJobSpec spec) {
        int keys = spec.keys();
        long[] counts = new long[keys];
        long[] sums = new long[keys];
        @SuppressWarnings("unchecked")
        SortedMap<Integer, byte[]>[] slots = new SortedMap[keys];
        for (long i = 0; i < spec.records(); i++) {
            int key = (int) (i % keys);
            counts[key]++;
            sums[key] += value(i);
            if (slots[key] == null) {
                slots[key] = new TreeMap<>();
            }
            xorInto(slots[key], slot(i, spec), payload(i, spec.payloadBytes()));
        }
        Map<Integer, KeyResult> expected = new TreeMap<>();
        for (int key = 0; key < keys; key++) {
            if (counts[key] > 0) {
                expected.put(key, new KeyResult(key, counts[key], sums[key], checksum(slots[key])));
            }
        }
        return expected;
    }

    // ------------------------------------------------------------------ shared by job and expectation

    static long value(long index) {
        return Math.floorMod(mix(index), 1_000L);
    }

    static int slot(long index, TestJobSpec spec) {
        return (int) ((index / spec.keys()) % spec.payloadSlots());
    }

    static byte[] payload(long index, int bytes) {
        byte[] payload = new byte[bytes];
        long state = mix(index ^ 0x5DEECE66DL);
        for (int i = 0; i < bytes; i++) {
            if ((i & 7) == 0) {
                state = mix(state + i);
            }
            payload[i] = (byte) (state >>> ((i & 7) * 8));
        }
        return payload;
    }

    /** XORs {@code payload} into the slot's array (a new array, never the stored one). */
    static void xorInto(Map<Integer, byte[]> slots, int slot, byte[] payload) {
        byte[] current = slots.get(slot);
        byte[] next = current == null ? new byte[payload.length] : current.clone();
        for (int i = 0; i < payload.length; i++) {
            next[i] ^= payload[i];
        }
        slots.put(slot, next);
    }

    /** CRC32 over (slot, bytes) in slot order. */
    static long checksum(SortedMap<Integer, byte[]> slots) {
        CRC32 crc = new CRC32();
        for (Map.Entry<Integer, byte[]> entry : slots.entrySet()) {
            int slot = entry.getKey();
            crc.update(new byte[] {(byte) (slot >>> 24), (byte) (slot >>> 16), (byte) (slot >>> 8), (byte) slot});
            crc.update(entry.getValue());
        }
        return crc.getValue();
    }

    /** SplitMix64 finalizer: a cheap, well-distributed bijection on longs. */
    private static long mix(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
