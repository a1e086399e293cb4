package io.sr3.flink.testjob;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * {@link StatefulTestJob} with a bursty input: the same records, keyed state and results, but the
 * source follows a {@link BurstSchedule} instead of a fixed rate, the keyed operator does a fixed
 * amount of work per record ({@link RecordWork}) and measures end-to-end latency, and failures can
 * be injected any number of times ({@link BurstyRuns.Run#armFailure()}).
 *
 * <pre>
 *   DataGeneratorSource (parallelism 1, record i held back until origin + schedule offset of i)
 *     -> RearmableFailureInjector (parallelism 1, chained)
 *     -> keyBy(i % keys)
 *     -> LatencyTrackingStateFunction (KeyedStateFunction + work + latency)
 *     -> one KeyResult per key at the end of input
 * </pre>
 * The source runs with parallelism 1 because record indices are split into contiguous ranges per
 * source subtask, which would not follow one schedule. {@code spec.records()} must equal
 * {@code schedule.records()}; {@code spec.recordsPerSecond()} is not used. The exact results are
 * {@link StatefulTestJob#expectedResults}{@code (spec)}.
 */
public final class BurstyTestJob {

    public static final String SOURCE_UID = "sr3-bursty-source";
    public static final String INJECTOR_UID = "sr3-bursty-failure-injector";
    public static final String STATE_UID = "sr3-bursty-keyed-state";
    public static final String SINK_UID = "sr3-bursty-sink";

    private BurstyTestJob() {}

    /** A spec for {@code schedule}: its record count, otherwise {@link TestJobSpec#of}'s defaults. */
    public static TestJobSpec spec(String runId, BurstSchedule schedule) {
        return TestJobSpec.of(runId).withRecords(schedule.records(), 0);
    }

    /**
     * The job from source to per-key results.
     *
     * @param work what the keyed operator spends per record
     * @param caughtUpMillis a restarted source has caught up once it passes a record at most this long
     *     after the record was due
     */
    public static DataStream<KeyResult> build(StreamExecutionEnvironment env, TestJobSpec spec, BurstSchedule schedule,
            RecordWork work, long caughtUpMillis) {
        if (spec.records() != schedule.records()) {
            throw new IllegalArgumentException("The spec has " + spec.records() + " records, the schedule "
                    + schedule.records());
        }
        DataGeneratorSource<Event> source = new DataGeneratorSource<>(
                new ScheduledEventGenerator(spec.runId(), schedule, spec.keys(), spec.payloadBytes()), spec.records(),
                new ScheduleRateLimiterStrategy<>(spec.runId()), TypeInformation.of(Event.class));
        WatermarkStrategy<Event> watermarks = WatermarkStrategy.<Event>forMonotonousTimestamps()
                .withTimestampAssigner((event, previous) -> event.index());
        return env.fromSource(source, watermarks, "sr3-bursty-source").uid(SOURCE_UID).setParallelism(1)
                .map(new RearmableFailureInjector(spec.runId(), schedule, caughtUpMillis)).uid(INJECTOR_UID).name("failure-injector")
                .setParallelism(1)
                .keyBy(Event::key)
                .process(new LatencyTrackingStateFunction(spec, schedule, work)).uid(STATE_UID)
                .name("keyed-state");
    }

    /** {@link #build} plus a {@link RegistrySink} for {@code spec.runId()}. */
    public static void addToEnvironment(StreamExecutionEnvironment env, TestJobSpec spec, BurstSchedule schedule,
            RecordWork work, long caughtUpMillis) {
        build(env, spec, schedule, work, caughtUpMillis).sinkTo(new RegistrySink(spec.runId())).uid(SINK_UID)
                .name("registry-sink");
    }
}
