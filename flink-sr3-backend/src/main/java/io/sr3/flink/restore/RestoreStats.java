package io.sr3.flink.restore;

import io.sr3.flink.node.Structure;
import io.sr3.flink.node.RingNode;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The restores of one node over time, for metrics: how many per structure, the latest report, and
 * the median prediction error over the last {@link #WINDOW} restores that fetched anything.
 */
@ThreadSafe
public final class RestoreStats {

    /** Restores the median prediction error is computed over. */
    public static final int WINDOW = 100;

    private final Map<Structure, AtomicLong> byStructure = new EnumMap<>(Structure.class);
    private final AtomicLong refetchedBlocks = new AtomicLong();
    private final AtomicLong replans = new AtomicLong();
    private final Deque<Double> errors = new ArrayDeque<>();
    private volatile RestoreReport last;

    /** The restores {@code node} has run. */
    public static RestoreStats of(RingNode node) {
        return node.attachment(RestoreStats.class, n -> new RestoreStats());
    }

    public RestoreStats() {
        for (Structure s : Structure.values()) {
            byStructure.put(s, new AtomicLong());
        }
    }

    public void record(RestoreReport report) {
        byStructure.get(report.structure()).incrementAndGet();
        refetchedBlocks.addAndGet(report.refetchedBlocks());
        replans.addAndGet(report.replans());
        double error = report.predictionError();
        if (!Double.isNaN(error)) {
            synchronized (errors) {
                errors.addLast(error);
                if (errors.size() > WINDOW) {
                    errors.removeFirst();
                }
            }
        }
        last = report;
    }

    public long restores(Structure structure) {
        return byStructure.get(structure).get();
    }

    public long refetchedBlocks() {
        return refetchedBlocks.get();
    }

    public long replans() {
        return replans.get();
    }

    @Nullable
    public RestoreReport last() {
        return last;
    }

    /** Median of the recent prediction errors, NaN before the first restore that fetched anything. */
    public double medianPredictionError() {
        double[] values;
        synchronized (errors) {
            values = errors.stream().mapToDouble(Double::doubleValue).toArray();
        }
        if (values.length == 0) {
            return Double.NaN;
        }
        Arrays.sort(values);
        int mid = values.length / 2;
        return values.length % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
    }
}
