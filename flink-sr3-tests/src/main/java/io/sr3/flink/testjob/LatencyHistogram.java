package io.sr3.flink.testjob;

import javax.annotation.concurrent.ThreadSafe;

import java.util.concurrent.atomic.AtomicLongArray;

/** Counts of latencies in 1 ms buckets up to {@value #MAX_MILLIS} ms (longer ones in the last bucket). */
@ThreadSafe
public final class LatencyHistogram {

    public static final int MAX_MILLIS = 300_000;

    private final AtomicLongArray buckets = new AtomicLongArray(MAX_MILLIS + 1);

    public void record(long millis) {
        buckets.incrementAndGet((int) Math.max(0, Math.min(MAX_MILLIS, millis)));
    }

    public long count() {
        long n = 0;
        for (int i = 0; i < buckets.length(); i++) {
            n += buckets.get(i);
        }
        return n;
    }

    /** The smallest latency (ms) at or below which a fraction {@code q} of the records fall; -1 if empty. */
    public long quantile(double q) {
        long total = count();
        if (total == 0) {
            return -1;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i = 0; i < buckets.length(); i++) {
            seen += buckets.get(i);
            if (seen >= rank) {
                return i;
            }
        }
        return MAX_MILLIS;
    }
}
