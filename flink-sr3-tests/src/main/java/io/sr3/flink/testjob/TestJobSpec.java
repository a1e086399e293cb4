package io.sr3.flink.testjob;

import java.io.Serializable;
import java.util.Objects;

/**
 * The parameters of one run of {@link StatefulTestJob}: everything the job computes, and so
 * everything {@link StatefulTestJob#expectedResults} needs, follows from these values.
 *
 * <p>Start from {@link #of(String)} and adjust with the {@code with*} methods.
 *
 * @param runId names the run in {@link RunRegistry}; every attempt and every resubmission of one
 *     logical run (failover, restore from a checkpoint or savepoint) uses the same id
 * @param records how many records the source emits in total (indices {@code 0 .. records-1})
 * @param recordsPerSecond the source's total rate over all parallel instances; {@code <= 0} for
 *     no limit
 * @param keys how many distinct keys ({@code index % keys})
 * @param payloadBytes bytes of payload per record; each key keeps {@code payloadSlots} such
 *     arrays in MapState, so keyed state is about {@code keys * payloadSlots * payloadBytes}
 * @param payloadSlots MapState entries per key
 * @param windowMillis the event-time period after which a key's buffered ListState is folded
 *     into its ValueState by a timer (event time of record {@code i} is {@code i} ms)
 * @param failure whether and how {@link FailureInjector} throws once in this run
 * @param failAfterRecords records a parallel instance of the injector must have seen in its
 *     current attempt before it may throw
 */
public record TestJobSpec(
        String runId,
        long records,
        double recordsPerSecond,
        int keys,
        int payloadBytes,
        int payloadSlots,
        long windowMillis,
        FailureMode failure,
        long failAfterRecords) implements Serializable {

    private static final long serialVersionUID = 1L;

    /** When {@link FailureInjector} throws (at most once per run id, always after a completed checkpoint). */
    public enum FailureMode {
        /** Never. */
        NONE,
        /** As soon as a checkpoint completed and {@code failAfterRecords} were seen. */
        AFTER_CHECKPOINT,
        /** Like {@link #AFTER_CHECKPOINT}, but only once the test called {@link RunRegistry.Run#armFailure()}. */
        WHEN_ARMED
    }

    public TestJobSpec {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(failure, "failure");
        if (records < 1) {
            throw new IllegalArgumentException("records must be >= 1, was " + records);
        }
        if (keys < 1) {
            throw new IllegalArgumentException("keys must be >= 1, was " + keys);
        }
        if (payloadBytes < 0) {
            throw new IllegalArgumentException("payloadBytes must be >= 0, was " + payloadBytes);
        }
        if (payloadSlots < 1) {
            throw new IllegalArgumentException("payloadSlots must be >= 1, was " + payloadSlots);
        }
        if (windowMillis < 1) {
            throw new IllegalArgumentException("windowMillis must be >= 1, was " + windowMillis);
        }
        if (failAfterRecords < 0) {
            throw new IllegalArgumentException("failAfterRecords must be >= 0, was " + failAfterRecords);
        }
    }

    /** 4,000 records at 2,000 records/s over 16 keys, 4 x 256 payload bytes per key, no failure. */
    public static TestJobSpec of(String runId) {
        return new TestJobSpec(runId, 4_000, 2_000, 16, 256, 4, 50, FailureMode.NONE, 0);
    }

    public TestJobSpec withRecords(long newRecords, double newRecordsPerSecond) {
        return new TestJobSpec(runId, newRecords, newRecordsPerSecond, keys, payloadBytes, payloadSlots, windowMillis,
                failure, failAfterRecords);
    }

    public TestJobSpec withKeys(int newKeys) {
        return new TestJobSpec(runId, records, recordsPerSecond, newKeys, payloadBytes, payloadSlots, windowMillis,
                failure, failAfterRecords);
    }

    public TestJobSpec withPayload(int newPayloadBytes, int newPayloadSlots) {
        return new TestJobSpec(runId, records, recordsPerSecond, keys, newPayloadBytes, newPayloadSlots, windowMillis,
                failure, failAfterRecords);
    }

    public TestJobSpec withWindowMillis(long newWindowMillis) {
        return new TestJobSpec(runId, records, recordsPerSecond, keys, payloadBytes, payloadSlots, newWindowMillis,
                failure, failAfterRecords);
    }

    public TestJobSpec withFailure(FailureMode newFailure, long newFailAfterRecords) {
        return new TestJobSpec(runId, records, recordsPerSecond, keys, payloadBytes, payloadSlots, windowMillis,
                newFailure, newFailAfterRecords);
    }

    /** Approximate keyed state held by the job at the end of input, payloads only. */
    public long approximateStateBytes() {
        long slotsUsed = Math.min((long) payloadSlots, (records + keys - 1) / keys);
        return Math.min((long) keys, records) * slotsUsed * payloadBytes;
    }
}
