package io.sr3.flink.fs;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Blocking ring lookups of many files at once, such as the manifests of the files a restore
 * reads: each costs a round trip, and one after the other they add up before the first block
 * moves. Runs on threads of its own, never on the node's I/O threads, which the lookups wait for.
 */
final class ParallelLookup {

    /** At most this many lookups are in flight. */
    static final int THREADS = 8;

    /** One lookup, which may fail with an I/O error. */
    @FunctionalInterface
    interface Lookup<P, R> {
        R apply(P item) throws IOException;
    }

    private ParallelLookup() {}

    /**
     * The results of {@code lookup} for every item, in the items' order.
     *
     * @throws IOException the first failure in item order; the other lookups are cancelled
     */
    static <P, R> List<R> of(List<P> items, Lookup<P, R> lookup) throws IOException {
        List<R> results = new ArrayList<>(items.size());
        if (items.size() <= 1) {
            for (P item : items) {
                results.add(lookup.apply(item));
            }
            return results;
        }
        AtomicInteger counter = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(THREADS, items.size()), runnable -> {
            Thread thread = new Thread(runnable, "sr3-lookup-" + counter.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<R>> futures = new ArrayList<>(items.size());
            for (P item : items) {
                futures.add(pool.submit(() -> lookup.apply(item)));
            }
            for (Future<R> future : futures) {
                results.add(future.get());
            }
            return results;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("Interrupted while looking up " + items.size() + " files in the sr3 ring");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IOException(e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }
}
