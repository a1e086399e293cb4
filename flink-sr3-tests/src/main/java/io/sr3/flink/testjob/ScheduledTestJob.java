package io.sr3.flink.testjob;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * {@link StatefulTestJob}'s job with its input on a schedule that holds across processes (Flink
 * 2.x only: its rate limiter uses the 2.x source API; the 1.20 build leaves this class out).
 */
public final class ScheduledTestJob {

    private ScheduledTestJob() {}

    /**
     * The job of {@link StatefulTestJob#build} with an input that arrives on {@code schedule} from a fixed
     * moment on, as records appended to a log: record {@code i} is held back until
     * {@code originMillis + schedule.dueOffsetMillis(i)}, and a source that is behind (after a
     * restore, on any TaskManager) reads what is due at full speed until it is back at the
     * present. The source runs with parallelism 1 (one schedule, see {@link BurstyTestJob}); the
     * event time of record {@code i} is {@code i} ms as in {@link StatefulTestJob#build}, so the keyed
     * operator's input watermark tells which records it has processed. {@code spec.records()}
     * must equal {@code schedule.records()}; the exact results are {@link StatefulTestJob#expectedResults}.
     *
     * @param originMillis epoch millis at which the schedule starts (the same clock in every process of one host)
     */
    public static DataStream<KeyResult> build(StreamExecutionEnvironment env, TestJobSpec spec,
            BurstSchedule schedule, long originMillis) {
        if (spec.records() != schedule.records()) {
            throw new IllegalArgumentException("The spec has " + spec.records() + " records, the schedule "
                    + schedule.records());
        }
        if (originMillis <= 0) {
            throw new IllegalArgumentException("originMillis must be an epoch time, was " + originMillis);
        }
        DataGeneratorSource<Event> source = new DataGeneratorSource<>(
                new ScheduledEventGenerator(spec.runId(), schedule, spec.keys(), spec.payloadBytes(), originMillis),
                spec.records(), new ScheduleRateLimiterStrategy<>(spec.runId()), TypeInformation.of(Event.class));
        WatermarkStrategy<Event> watermarks = WatermarkStrategy.<Event>forMonotonousTimestamps()
                .withTimestampAssigner((event, previous) -> event.index());
        return env.fromSource(source, watermarks, "sr3-test-source").uid(StatefulTestJob.SOURCE_UID).setParallelism(1)
                .map(new FailureInjector(spec)).uid(StatefulTestJob.INJECTOR_UID).name("failure-injector").setParallelism(1)
                .keyBy(Event::key)
                .process(new KeyedStateFunction(spec)).uid(StatefulTestJob.STATE_UID).name("keyed-state");
    }
}
