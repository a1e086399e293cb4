package io.sr3.flink.benchmark;

import io.sr3.flink.testjob.RunRegistry;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * A throughput window in the middle of a run: the records the job's keyed-state operator processed
 * between the first sample at or above {@code from} records and the first at or above {@code to},
 * sampled every {@link BackendComparisonBenchmark#THROUGHPUT_SAMPLE_INTERVAL}. It leaves out the
 * start (state still growing, JIT) and the end (end-of-input emission, the final checkpoint Flink
 * waits for before FINISHED).
 */
record SteadyWindow(long records, long millis) {

    static SteadyWindow sample(RunRegistry.Run run, long from, long to, Duration timeout)
            throws TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long startNanos = -1;
        long startRecords = -1;
        while (System.nanoTime() < deadline) {
            long now = System.nanoTime();
            long processed = run.processedRecords();
            if (startNanos < 0 && processed >= from) {
                startNanos = now;
                startRecords = processed;
            }
            if (startNanos >= 0 && processed >= to && now > startNanos) {
                return new SteadyWindow(processed - startRecords, Duration.ofNanos(now - startNanos).toMillis());
            }
            LockSupport.parkNanos(BackendComparisonBenchmark.THROUGHPUT_SAMPLE_INTERVAL.toNanos());
        }
        throw new TimeoutException("The job processed " + run.processedRecords() + " records within " + timeout
                + "; the steady window needs " + from + " to " + to);
    }

    double recordsPerSecond() {
        return records * 1000.0 / millis;
    }
}
