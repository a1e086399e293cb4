package io.sr3.flink.restore;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.RelayRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Times fetches of probe blocks over the ring's {@code RELAY_BLOCK} path for one {@link
 * NetworkProbe}: single fetches and their median, and steady streams over several lanes at once,
 * every wait bounded by request deadlines so a peer that stops answering fails the probe.
 */
@NotThreadSafe
final class RelayTimer {

    private static final Logger LOG = LoggerFactory.getLogger(RelayTimer.class);

    private final RingNode node;
    private final NetworkProbe.Settings settings;

    RelayTimer(RingNode node, NetworkProbe.Settings settings) {
        this.node = node;
        this.settings = settings;
    }

    /**
     * Streams probe blocks over {@code lanes} (one holder id per lane, repeated for more in
     * flight), each lane fetching {@code 2 * samples} blocks one after the other, and returns the
     * steady rate: the blocks after the first wave over the time after it. The first wave pays
     * the round trip and arrives all at once, which a long restore does only once.
     */
    double streamRate(List<String> lanes, Map<String, RelayRequest> fetch) throws IOException {
        int perLane = 2 * settings.samples();
        Queue<Long> delivered = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (String holder : lanes) {
            CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
            for (int i = 0; i < perLane; i++) {
                chain = chain.thenCompose(ignored -> node.relay(fetch.get(holder)).thenAccept(data -> {
                    delivered.add(System.nanoTime());
                    node.blockBuffers().release(data);
                }));
            }
            running.add(chain);
        }
        await(CompletableFuture.allOf(running.toArray(new CompletableFuture<?>[0])), "streaming probe blocks from "
                + new TreeSet<>(lanes), perLane * lanes.size());
        long[] times = delivered.stream().mapToLong(t -> t).sorted().toArray();
        double afterFirstWave = (times[times.length - 1] - times[lanes.size() - 1]) / 1e9;
        return (double) (times.length - lanes.size()) * settings.probeBytes() / Math.max(afterFirstWave, 1e-9);
    }

    /**
     * The better of two {@link #streamRate}s over the same lanes. A stream is only ever slowed by
     * work that is not the link's (the node's own tasks, other transfers on shared cores), never
     * sped up, so the better one is nearer the link's rate, as {@link LinkEstimator} keeps the
     * highest rate it saw.
     */
    double bestStreamRate(List<String> lanes, Map<String, RelayRequest> fetch) throws IOException {
        return Math.max(streamRate(lanes, fetch), streamRate(lanes, fetch));
    }

    /**
     * Blocks in flight that keep a link busy: enough that their transmissions cover one whole
     * fetch, round trip included ({@code single} seconds for a block alone, {@code roundTrip}
     * for a tiny one), at most {@code max}. On a LAN that is 2; over a distant link, more.
     */
    static int window(double single, double roundTrip, int max) {
        double transmit = Math.max(single - roundTrip, 1e-6);
        return (int) Math.min(max, Math.ceil(single / transmit) + 1);
    }

    /** {@code count} lanes spread round robin over {@code holders}. */
    static List<String> lanes(List<String> holders, int count) {
        List<String> lanes = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            lanes.add(holders.get(i % holders.size()));
        }
        return lanes;
    }

    double medianSeconds(RelayRequest request) throws IOException {
        double[] times = new double[settings.samples()];
        for (int i = 0; i < times.length; i++) {
            times[i] = timeOnce(request);
        }
        return median(times);
    }

    double timeOnce(RelayRequest request) throws IOException {
        long begin = System.nanoTime();
        node.blockBuffers().release(await(node.relay(request), "fetching probe block " + request.key() + " along "
                + request.route()));
        return (System.nanoTime() - begin) / 1e9;
    }

    /**
     * Deletes a probe block, logging instead of failing when the holder cannot be reached: a
     * leftover probe block is overwritten by the next probe and swept as an orphan.
     */
    void deleteQuietly(Member holder, String key) {
        try {
            await(node.delete(holder, key), "deleting probe block " + key + " on " + holder.id());
        } catch (IOException e) {
            LOG.warn("[{}] could not delete probe block {} on {}; the next probe or the orphan sweep will: {}",
                    node.self().id(), key, holder.id(), e.getMessage());
        }
    }

    <T> T await(CompletableFuture<T> future, String what) throws IOException {
        return await(future, what, 1);
    }

    /** Waits for {@code future}, allowing {@code requests} request deadlines of the longest route the probe uses. */
    private <T> T await(CompletableFuture<T> future, String what, int requests) throws IOException {
        Duration deadline = node.config().requestTimeout().multipliedBy(2L * Math.max(1, requests));
        try {
            return future.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw new IOException("sr3 network probe from " + node.self().id() + " failed " + what + ": " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new IOException("sr3 network probe from " + node.self().id() + " got no answer " + what + " within "
                    + deadline + "; is the peer overloaded or gone?", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("Interrupted " + what);
        }
    }

    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
