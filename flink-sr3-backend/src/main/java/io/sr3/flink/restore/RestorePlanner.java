package io.sr3.flink.restore;

import io.sr3.flink.node.Structure;

import javax.annotation.Nullable;
import javax.annotation.concurrent.Immutable;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Predicts how long star, line and tree restores take over a measured network and picks the
 * fastest, unless one that relays less is predicted within {@link #RELAY_MARGIN} of it. A pure
 * function: same inputs, same plan.
 *
 * <p>The model (DESIGN.md section 4), for {@code S} bytes from {@code k} senders:
 *
 * <ul>
 *   <li>star: {@code max(S / min(inbound(k), sum of sender links), max over senders of their
 *       share / their link) + slowest round trip};
 *   <li>line: each hop carries everything sent before it, pipelined block by block, so the
 *       slowest hop relative to its load bounds the time, plus a round trip and a start-up per hop;
 *   <li>tree: like line, per edge of a tree of fan-in {@code f}, plus depth times (round trip and
 *       start-up); the root receives from at most {@code f} children.
 * </ul>
 *
 * <p>Blocks are assigned to senders by longest-processing-time-first over their holders, so that
 * no holder becomes everybody's bottleneck; planning all subtasks of a TaskManager in one call
 * balances across them too.
 */
@Immutable
public final class RestorePlanner {

    /**
     * How much faster a structure must be predicted than one that relays less to be chosen over
     * it: every relay hop reads, verifies and sends each block again on a node that is also
     * running tasks (CPU the link estimates do not see), and adds a node the restore depends on.
     * Within this margin a prediction cannot tell the structures apart.
     */
    public static final double RELAY_MARGIN = 0.10;

    /** From least to most relaying: star none, a tree through its depth, a line through every holder. */
    private static final List<Structure> BY_RELAYING = List.of(Structure.STAR, Structure.TREE, Structure.LINE);

    private final int treeFanIn;

    public RestorePlanner(int treeFanIn) {
        if (treeFanIn < 2) {
            throw new IllegalArgumentException("Tree fan-in must be >= 2, was " + treeFanIn);
        }
        this.treeFanIn = treeFanIn;
    }

    /**
     * Plans one restore.
     *
     * @param blocks everything to restore; may be empty
     * @param forced a structure to use when it can run, or null to pick the fastest
     */
    public RestorePlan plan(List<BlockSource> blocks, NetworkModel network, @Nullable Structure forced) {
        return plan(blocks, network, forced, Map.of());
    }

    /**
     * Plans one restore while others run: {@code pendingBytes} (holder id to bytes it still sends
     * for them) counts as work each holder has before this restore's blocks.
     */
    public RestorePlan plan(List<BlockSource> blocks, NetworkModel network, @Nullable Structure forced,
            Map<String, Long> pendingBytes) {
        Map<String, List<BlockSource>> assignment = assign(blocks, network, pendingBytes);
        List<String> senders = new ArrayList<>(assignment.keySet());
        Map<String, Long> load = new HashMap<>();
        assignment.forEach((holder, list) -> load.put(holder, list.stream().mapToLong(BlockSource::bytes).sum()));

        Map<Structure, Double> predicted = new EnumMap<>(Structure.class);
        predicted.put(Structure.STAR, star(senders, load, network));
        List<String> chain = chain(senders, network);
        Map<String, String> parents = tree(senders, network);
        if (senders.size() >= 2) {
            predicted.put(Structure.LINE, line(chain, load, network));
        }
        if (senders.size() > treeFanIn) {
            predicted.put(Structure.TREE, tree(parents, load, network));
        }

        Structure fastest = predicted.entrySet().stream().min(Map.Entry.comparingByValue()).orElseThrow().getKey();
        double withinMargin = predicted.get(fastest) * (1 + RELAY_MARGIN);
        Structure automatic = BY_RELAYING.stream()
                .filter(s -> predicted.containsKey(s) && predicted.get(s) <= withinMargin)
                .findFirst().orElseThrow();
        Structure chosen = automatic;
        String note = null;
        if (forced != null && predicted.containsKey(forced)) {
            chosen = forced;
        } else if (forced != null) {
            note = name(forced) + " cannot run with " + senders.size() + " sender(s)"
                    + (forced == Structure.TREE ? " and fan-in " + treeFanIn : "") + "; using " + name(automatic);
        } else if (automatic != fastest) {
            note = String.format(Locale.ROOT, "%s: %s predicted only %.0f%% faster (more relaying must win by %.0f%%)",
                    name(automatic), name(fastest), 100 * (1 - predicted.get(fastest) / predicted.get(automatic)),
                    100 * RELAY_MARGIN);
        }
        return new RestorePlan(chosen, predicted, assignment,
                chosen == Structure.LINE ? chain : List.of(),
                chosen == Structure.TREE ? parents : Map.of(),
                note);
    }

    private static String name(Structure structure) {
        return structure.name().toLowerCase(Locale.ROOT);
    }

    /**
     * Longest block first, each to the holder that would finish its share earliest, counting the
     * bytes it still sends for other restores.
     */
    static Map<String, List<BlockSource>> assign(List<BlockSource> blocks, NetworkModel network,
            Map<String, Long> pendingBytes) {
        List<BlockSource> bySize = new ArrayList<>(blocks);
        bySize.sort(Comparator.comparingLong(BlockSource::bytes).reversed().thenComparing(BlockSource::key));
        Map<String, Double> finish = new HashMap<>();
        pendingBytes.forEach((holder, bytes) -> finish.put(holder, network.toRecovering(holder).seconds(bytes)));
        Map<String, List<BlockSource>> assignment = new LinkedHashMap<>();
        for (BlockSource block : bySize) {
            String best = null;
            double bestFinish = Double.MAX_VALUE;
            for (String holder : block.holders()) {
                double end = finish.getOrDefault(holder, 0.0) + network.toRecovering(holder).seconds(block.bytes());
                if (end < bestFinish) {
                    best = holder;
                    bestFinish = end;
                }
            }
            finish.put(best, bestFinish);
            assignment.computeIfAbsent(best, h -> new ArrayList<>()).add(block);
        }
        return assignment;
    }

    private static double star(List<String> senders, Map<String, Long> load, NetworkModel network) {
        if (senders.isEmpty()) {
            return 0;
        }
        long total = 0;
        double aggregate = 0;
        double slowestShare = 0;
        double slowestRoundTrip = 0;
        for (String sender : senders) {
            Link link = network.toRecovering(sender);
            total += load.get(sender);
            aggregate += link.bytesPerSecond();
            slowestShare = Math.max(slowestShare, link.seconds(load.get(sender)));
            slowestRoundTrip = Math.max(slowestRoundTrip, link.roundTripSeconds());
        }
        double receive = total / Math.min(network.inbound(senders.size()), aggregate);
        return Math.max(receive, slowestShare) + slowestRoundTrip;
    }

    /** Holders ordered so that the one with the best link to the recovering node delivers. */
    private static List<String> chain(List<String> senders, NetworkModel network) {
        List<String> chain = new ArrayList<>(senders);
        chain.sort(Comparator.comparingDouble((String h) -> network.toRecovering(h).bytesPerSecond()).thenComparing(h -> h));
        return chain;
    }

    private double line(List<String> chain, Map<String, Long> load, NetworkModel network) {
        long carried = 0;
        double bottleneck = 0;
        double latency = 0;
        double startup = network.hopStartup().toNanos() / 1e9;
        for (int i = 0; i < chain.size(); i++) {
            String from = chain.get(i);
            carried += load.get(from);
            Link hop = i + 1 < chain.size() ? network.between(from, chain.get(i + 1)) : network.toRecovering(from);
            double rate = i + 1 < chain.size() ? hop.bytesPerSecond() : Math.min(hop.bytesPerSecond(), network.inbound(1));
            bottleneck = Math.max(bottleneck, carried / rate);
            latency += hop.roundTripSeconds() + startup;
        }
        return bottleneck + latency;
    }

    /**
     * A tree of fan-in {@link #treeFanIn}: the holders with the best links to the recovering node
     * are its children; the rest attach breadth-first under them.
     */
    private Map<String, String> tree(List<String> senders, NetworkModel network) {
        List<String> byLink = new ArrayList<>(senders);
        byLink.sort(Comparator.comparingDouble((String h) -> -network.toRecovering(h).bytesPerSecond()).thenComparing(h -> h));
        Map<String, String> parents = new LinkedHashMap<>();
        List<String> frontier = new ArrayList<>();
        int next = 0;
        for (; next < Math.min(treeFanIn, byLink.size()); next++) {
            parents.put(byLink.get(next), RestorePlan.RECOVERING);
            frontier.add(byLink.get(next));
        }
        int parentIndex = 0;
        while (next < byLink.size()) {
            String parent = frontier.get(parentIndex++);
            for (int c = 0; c < treeFanIn && next < byLink.size(); c++, next++) {
                parents.put(byLink.get(next), parent);
                frontier.add(byLink.get(next));
            }
        }
        return parents;
    }

    private double tree(Map<String, String> parents, Map<String, Long> load, NetworkModel network) {
        Map<String, Long> subtree = new HashMap<>(load);
        Map<String, Integer> depth = new HashMap<>();
        List<String> order = new ArrayList<>(parents.keySet());
        for (String node : order) {
            String parent = parents.get(node);
            depth.put(node, parent.equals(RestorePlan.RECOVERING) ? 1 : depth.get(parent) + 1);
        }
        // Children come after their parents in insertion order: accumulate bottom-up.
        for (int i = order.size() - 1; i >= 0; i--) {
            String node = order.get(i);
            String parent = parents.get(node);
            if (!parent.equals(RestorePlan.RECOVERING)) {
                subtree.merge(parent, subtree.get(node), Long::sum);
            }
        }
        double bottleneck = 0;
        long atRoot = 0;
        double rootAggregate = 0;
        int rootChildren = 0;
        double startup = network.hopStartup().toNanos() / 1e9;
        double deepestLatency = 0;
        Map<String, Double> latency = new HashMap<>();
        for (String node : order) {
            String parent = parents.get(node);
            Link edge = parent.equals(RestorePlan.RECOVERING) ? network.toRecovering(node) : network.between(node, parent);
            bottleneck = Math.max(bottleneck, edge.seconds(subtree.get(node)));
            double hop = edge.roundTripSeconds() + startup;
            latency.put(node, hop + (parent.equals(RestorePlan.RECOVERING) ? 0 : latency.get(parent)));
            deepestLatency = Math.max(deepestLatency, latency.get(node));
            if (parent.equals(RestorePlan.RECOVERING)) {
                atRoot += subtree.get(node);
                rootAggregate += edge.bytesPerSecond();
                rootChildren++;
            }
        }
        double receive = atRoot / Math.min(network.inbound(rootChildren), rootAggregate);
        return Math.max(bottleneck, receive) + deepestLatency;
    }
}
