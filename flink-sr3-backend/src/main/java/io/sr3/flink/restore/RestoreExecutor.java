package io.sr3.flink.restore;

import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.node.RelayException;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.RelayRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Brings a set of blocks to this node through a star, line or tree plan, verifying every block.
 *
 * <p>Every structure is executed the same way: each block gets a route from this node to its
 * assigned holder (star: the holder itself; line: the chain from its delivering end back to the
 * holder; tree: the holder's ancestors from the root's child down), and this node keeps up to
 * {@code maxConcurrentFetches} {@code RELAY_BLOCK} requests in flight, round-robin over the
 * holders. A relay request travels up the route and the block travels back down it, verified by
 * every node it crosses, so data flows block by block through the structure, pipelined.
 *
 * <p>Blocks this node holds itself are read from its store meanwhile ({@link OwnBlockReads}); a
 * local copy that fails its check is planned for the network like the others.
 *
 * <p>Holders the failure detector has already taken out of the ring are left out of the plan.
 * Faults: a block refused as corrupt (or missing) anywhere on its route is fetched directly from
 * another replica; a hop that cannot be reached is probed, and every unreachable node is taken out
 * of the plan, which is rebuilt for the blocks not yet received. Blocks already received are
 * never fetched again.
 *
 * <p>One executor serves one restore, on the calling (task) thread.
 */
@NotThreadSafe
public final class RestoreExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(RestoreExecutor.class);
    private static final Duration PROBE_DEADLINE = Duration.ofSeconds(1);

    private final RingNode node;
    private final NetworkView network;
    private final RestoreSettings settings;
    private final RestorePlanner planner;

    public RestoreExecutor(RingNode node, RestoreSettings settings) {
        this.node = node;
        this.network = NetworkView.of(node);
        this.settings = settings;
        this.planner = new RestorePlanner(settings.treeFanIn());
    }

    /**
     * Restores {@code blocks} into {@code sink}, logs one line, records it in {@link RestoreStats}.
     *
     * @param description what is restored, for the log line (subtask, files)
     * @throws IOException if a block has no intact replica left on any reachable node
     */
    public RestoreReport restore(String description, List<BlockFetch> blocks, BlockSink sink) throws IOException {
        return new Run(description, blocks, sink).execute();
    }

    /** The state of one restore. */
    private final class Run {
        private final String description;
        private final List<BlockFetch> blocks;
        private final BlockSink sink;
        private final boolean[] done;
        private final Set<String> unreachable = new HashSet<>();
        private final BlockingQueue<Outcome> outcomes = new LinkedBlockingQueue<>();
        /** Set once the restore ended: a fetch that answers later gives its buffer back at once. */
        private volatile boolean ended;
        private final Map<String, long[]> receivedByFirstHop = new HashMap<>();
        /** The holder each planned block is assigned to, for the node's {@link HolderLoad}. */
        private final Map<Integer, String> holderOf = new HashMap<>();
        private Map<Integer, List<String>> routes = Map.of();
        private final Deque<Integer> queue = new ArrayDeque<>();
        private final Set<Integer> inFlight = new HashSet<>();
        /** Blocks with a copy on this node, left out of the plan until that copy was read. */
        private final Set<Integer> readingLocally = new java.util.TreeSet<>();
        /** This node's own blocks, read while the network fetches the others. */
        private OwnBlockReads ownReads;
        private long localBytes;
        private RestorePlan firstPlan;
        private RestorePlan currentPlan;
        private long startNanos;
        private int remaining;
        private int localBlocks;
        private int refetched;
        private int replans;
        private long bytes;

        Run(String description, List<BlockFetch> blocks, BlockSink sink) {
            this.description = description;
            this.blocks = blocks;
            this.sink = sink;
            this.done = new boolean[blocks.size()];
            this.remaining = blocks.size();
        }

        RestoreReport execute() throws IOException {
            try {
                return run();
            } finally {
                ended = true;
                releaseUnconsumed();
                releaseLoad();
            }
        }

        private RestoreReport run() throws IOException {
            startNanos = System.nanoTime();
            for (int i = 0; i < blocks.size(); i++) {
                if (blocks.get(i).holders().stream().anyMatch(h -> h.sameNode(node.self()))) {
                    readingLocally.add(i);
                    localBytes += blocks.get(i).length();
                }
            }
            HolderReports.beforePlanning(node, network, blocks);
            replan();
            firstPlan = currentPlan;
            Map<String, String> plannedWith = network.estimates(firstPlan.assignment().keySet(), localBytes > 0);
            double localSeconds = localBytes / network.localReadBytesPerSecond();
            ownReads = new OwnBlockReads(node, blocks, readingLocally,
                    (index, data, error) -> arrive(new Outcome(index, List.of(), data, error)));
            while (remaining > 0) {
                ownReads.fill();
                fill();
                Outcome outcome = next();
                if (outcome.own()) {
                    takeOwn(outcome);
                    continue;
                }
                inFlight.remove(outcome.index);
                if (done[outcome.index]) {
                    release(outcome); // a late answer for a block already fetched another way
                    continue;
                }
                if (outcome.error == null) {
                    int length = outcome.data.remaining();
                    receivedByFirstHop.computeIfAbsent(outcome.route.get(0), h -> new long[2])[0] += length;
                    receivedByFirstHop.get(outcome.route.get(0))[1] = System.nanoTime();
                    node.metrics().bytesRead.addAndGet(length);
                    node.metrics().bytesReadRemote.addAndGet(length);
                    try {
                        deliver(outcome.index, outcome.data);
                    } finally {
                        release(outcome);
                    }
                } else {
                    recover(outcome);
                }
            }
            double actual = (System.nanoTime() - startNanos) / 1e9;
            learnLinks();
            RestoreReport report = new RestoreReport(description, bytes, blocks.size(), localBlocks,
                    firstPlan.assignment().size(), firstPlan.structure(), settings.forced(),
                    firstPlan.predictedWithLocalReads(localSeconds),
                    actual, refetched, replans, firstPlan.note(), plannedWith);
            LOG.info("[{}] {}", node.self().id(), report.logLine());
            RestoreStats.of(node).record(report);
            RestoreRates.publish(node, report);
            return report;
        }

        /**
         * One of this node's own blocks was read: delivered, or, when the local copy is unusable,
         * planned for the network like the others.
         */
        private void takeOwn(Outcome outcome) throws IOException {
            ownReads.taken();
            readingLocally.remove(outcome.index);
            if (outcome.error != null) {
                LOG.warn("[{}] local copy of {} unusable ({}); fetching it from a peer", node.self().id(),
                        blocks.get(outcome.index).description(), cause(outcome.error).getMessage());
                replan();
            } else {
                try {
                    localBlocks++;
                    node.metrics().bytesRead.addAndGet(outcome.data.remaining());
                    deliver(outcome.index, outcome.data);
                } finally {
                    release(outcome);
                }
            }
            if (ownReads.finished()) {
                network.recordLocalRead(localBytes, Duration.ofNanos(System.nanoTime() - startNanos));
            }
        }

        /** Plans every block not yet received around the unreachable nodes, and queues them. */
        private void replan() throws IOException {
            List<BlockSource> sources = new ArrayList<>();
            for (int i = 0; i < blocks.size(); i++) {
                if (done[i] || readingLocally.contains(i)) {
                    continue;
                }
                BlockFetch block = blocks.get(i);
                List<String> holders = new ArrayList<>();
                for (Member h : block.holders()) {
                    if (!h.sameNode(node.self()) && !unreachable.contains(h.id()) && node.membership().isLive(h)) {
                        holders.add(h.id());
                    }
                }
                if (holders.isEmpty()) {
                    refetch(i, "no holder left in the plan"); // the ring may still know a copy
                    continue;
                }
                sources.add(new BlockSource(Integer.toString(i), block.length(), holders));
            }
            releaseLoad();
            HolderLoad load = network.holderLoad();
            currentPlan = planner.plan(sources, network.model(), settings.forced(), load.snapshot());
            currentPlan.assignment().forEach((holder, assigned) -> {
                for (BlockSource source : assigned) {
                    holderOf.put(Integer.parseInt(source.key()), holder);
                    load.add(holder, source.bytes());
                }
            });
            routes = PlanRoutes.routes(currentPlan);
            queue.clear();
            queue.addAll(PlanRoutes.interleaved(currentPlan));
            queue.removeIf(inFlight::contains);
        }

        private void fill() {
            while (inFlight.size() < settings.maxConcurrentFetches() && !queue.isEmpty()) {
                int index = queue.poll();
                if (done[index]) {
                    continue;
                }
                BlockFetch block = blocks.get(index);
                List<String> route = routes.get(index);
                inFlight.add(index);
                CompletableFuture<ByteBuffer> fetch = node.relay(new RelayRequest(block.key(), block.length(), block.crc32c(), route));
                fetch.whenComplete((data, error) -> arrive(new Outcome(index, route, data, error)));
            }
        }

        /** Queues an answer or an own block's read for the restoring thread; safe from any thread. */
        private void arrive(Outcome outcome) {
            outcomes.add(outcome);
            if (ended) {
                releaseUnconsumed();
            }
        }

        private Outcome next() throws IOException {
            // Every relay carries the transport's deadline per hop, so an answer always comes; this bound is a backstop.
            long waitNanos = node.config().requestTimeout().multipliedBy(RelayRequest.MAX_HOPS).toNanos();
            try {
                Outcome outcome = outcomes.poll(waitNanos, TimeUnit.NANOSECONDS);
                if (outcome == null) {
                    throw new IOException("sr3 restore of " + description + " received nothing for "
                            + Duration.ofNanos(waitNanos) + " with " + (inFlight.size() + ownReads.inFlight()) + " block(s) in flight");
                }
                return outcome;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("Interrupted during the sr3 restore of " + description);
            }
        }

        private void recover(Outcome outcome) throws IOException {
            Throwable cause = cause(outcome.error);
            ErrorCode code = cause instanceof RelayException relay ? relay.code() : ErrorCode.UPSTREAM_FAILED;
            if (code == ErrorCode.CORRUPT || code == ErrorCode.NOT_FOUND) {
                refetch(outcome.index, cause.getMessage());
                return;
            }
            if (outcome.route.stream().anyMatch(unreachable::contains)) {
                queue.addFirst(outcome.index); // sent before the last re-plan, which gave it a new route
                return;
            }
            List<String> lost = probe(outcome.route);
            if (lost.isEmpty()) {
                refetch(outcome.index, cause.getMessage()); // every hop answers again: a transient failure
                return;
            }
            unreachable.addAll(lost);
            replans++;
            LOG.warn("[{}] sr3 restore of {}: {} unreachable ({}); re-planning the {} block(s) not yet received",
                    node.self().id(), description, lost, cause.getMessage(), remaining);
            replan();
        }

        /** The nodes of {@code route} that no longer answer a probe. */
        private List<String> probe(List<String> route) {
            Map<String, CompletableFuture<Boolean>> probes = new LinkedHashMap<>();
            for (String hop : route) {
                probes.put(hop, node.answers(Member.fromId(hop), PROBE_DEADLINE));
            }
            List<String> lost = new ArrayList<>();
            probes.forEach((hop, answered) -> {
                if (!answered.join()) {
                    lost.add(hop);
                }
            });
            return lost;
        }

        /** Fetches one block directly, trying every replica the ring knows; fails the restore if none is intact. */
        private void refetch(int index, String why) throws IOException {
            BlockFetch block = blocks.get(index);
            LOG.warn("[{}] sr3 restore of {}: {} ({}); fetching it directly from another replica",
                    node.self().id(), description, block.description(), why);
            List<Member> order = new ArrayList<>();
            for (Member h : block.holders()) {
                if (!unreachable.contains(h.id())) {
                    order.add(h);
                }
            }
            byte[] data = node.storage().readVerified(block.key(), block.length(), block.crc32c(), order, block.description());
            refetched++;
            deliver(index, ByteBuffer.wrap(data));
        }

        private void deliver(int index, ByteBuffer data) throws IOException {
            if (!done[index]) {
                int length = data.remaining();
                sink.accept(index, data);
                delivered(index, length);
            }
        }

        /** Gives the buffers of answers nobody will consume back to the node; safe from any thread. */
        private void releaseUnconsumed() {
            for (Outcome outcome = outcomes.poll(); outcome != null; outcome = outcomes.poll()) {
                release(outcome);
            }
        }

        private void release(Outcome outcome) {
            node.blockBuffers().release(outcome.data); // nothing for a failed fetch (null)
        }

        private void delivered(int index, int length) {
            String holder = holderOf.remove(index);
            if (holder != null) {
                network.holderLoad().remove(holder, blocks.get(index).length());
            }
            done[index] = true;
            remaining--;
            bytes += length;
        }

        /** Takes this restore's outstanding blocks off the holders' load (before a re-plan, and at the end). */
        private void releaseLoad() {
            HolderLoad load = network.holderLoad();
            holderOf.forEach((index, holder) -> load.remove(holder, blocks.get(index).length()));
            holderOf.clear();
        }

        /**
         * Through one neighbour (a line, a single holder), a restore measured its link to this node;
         * from several at once, their sum is what this node's inbound port carried at least.
         */
        private void learnLinks() {
            if (receivedByFirstHop.size() == 1) {
                receivedByFirstHop.forEach((hop, received) -> network.toThisNode()
                        .recordTransfer(hop, received[0], Duration.ofNanos(received[1] - startNanos)));
            } else if (receivedByFirstHop.size() > 1) {
                long bytes = receivedByFirstHop.values().stream().mapToLong(received -> received[0]).sum();
                long lastNanos = receivedByFirstHop.values().stream().mapToLong(received -> received[1]).max().orElseThrow();
                network.recordInbound(bytes, Duration.ofNanos(lastNanos - startNanos), receivedByFirstHop.size());
            }
        }
    }

    /** An answer to a fetch along {@code route}, or an own block's read (no route). */
    private record Outcome(int index, List<String> route, @Nullable ByteBuffer data, @Nullable Throwable error) {
        boolean own() {
            return route.isEmpty();
        }
    }

    private static Throwable cause(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
