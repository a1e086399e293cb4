package io.sr3.flink.restore;

import io.sr3.flink.node.RingNode;

import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What one node knows about the network around it, kept current from its own transfers (and from
 * explicit probes in benchmarks), and handed to the planner as a {@link NetworkModel} snapshot.
 *
 * <p>Until something is measured, every link is the default (a 1 Gbit/s LAN with a 0.5 ms round
 * trip) and the planner picks star, the right answer on a uniform LAN.
 */
@ThreadSafe
public final class NetworkView {

    /** What an unmeasured path is assumed to deliver: a 1 Gbit/s LAN. */
    public static final Link DEFAULT_LINK = new Link(125e6, Duration.ofMillis(1).dividedBy(2));

    private final LinkEstimator toThisNode = new LinkEstimator(0.3, DEFAULT_LINK);
    private final Map<String, Link> between = new ConcurrentHashMap<>();
    private final HolderLoad holderLoad = new HolderLoad();
    private volatile Inbound inbound = new Inbound(DEFAULT_LINK.bytesPerSecond(), 4, 0.0, Duration.ZERO);
    /**
     * How fast this node reads and delivers blocks it holds itself (verify, then write to the
     * restore's destination), learned from restores; until then a local disk through the heap.
     */
    private final LinkEstimator localReads = new LinkEstimator(0.3, new Link(DEFAULT_LOCAL_READ_BYTES_PER_SECOND,
            Duration.ZERO));

    /** The local read rate assumed before a restore measured one. */
    public static final double DEFAULT_LOCAL_READ_BYTES_PER_SECOND = 200e6;

    /**
     * The view of {@code node}, made on first use (at the node's start, by {@link
     * RestoreNodeExtension}); from then on every ping a peer answers is a round trip it learns
     * from, and every block read from a peer (repair, reads, restores) a bandwidth sample,
     * without a probe of its own.
     */
    public static NetworkView of(RingNode node) {
        return node.attachment(NetworkView.class, n -> {
            NetworkView view = new NetworkView();
            n.onRoundTrip(view.toThisNode()::recordRoundTrip);
            n.onTransfer(t -> view.toThisNode().recordTransfer(t.peer(), t.bytes(), t.elapsed(), t.concurrent()));
            return view;
        });
    }

    /** Links from each peer to this node, learned from transfers. */
    public LinkEstimator toThisNode() {
        return toThisNode;
    }

    /** Records that a restore read and delivered {@code bytes} of its own blocks in {@code elapsed}. */
    public void recordLocalRead(long bytes, Duration elapsed) {
        localReads.recordTransfer("local", bytes, elapsed);
    }

    /** How fast this node reads and delivers its own blocks, bytes per second. */
    public double localReadBytesPerSecond() {
        return localReads.link("local").bytesPerSecond();
    }

    /** What each holder still sends for the restores running on this node. */
    public HolderLoad holderLoad() {
        return holderLoad;
    }

    /** Records the measured link from holder {@code from} to holder {@code to}. */
    public void setBetween(String from, String to, Link link) {
        between.put(from + "->" + to, link);
    }

    /**
     * Records what this node can receive: total inbound rate, the senders it takes without loss
     * and the loss per sender beyond, and the fixed cost of one forwarding hop.
     */
    public void setInbound(double bytesPerSecond, int incastThreshold, double incastPenalty, Duration hopStartup) {
        this.inbound = new Inbound(bytesPerSecond, incastThreshold, incastPenalty, hopStartup);
    }

    /**
     * A snapshot for the planner. A path between two holders that nothing measured is assumed to
     * carry what its sender was measured to send this node (a holder that sends slowly here is
     * most likely slow at sending, to any node), and a path from a holder never measured the
     * median of the measured links, the LAN default only while none was. An unmeasured hop
     * assumed faster than what was measured would make a line or tree through it look better
     * than star on a network that is uniform but loaded.
     */
    public NetworkModel model() {
        Inbound in = inbound;
        Map<String, Link> toMe = toThisNode.links();
        Map<String, Link> paths = new HashMap<>(between);
        for (String from : toMe.keySet()) {
            if (toThisNode.rateAge(from).isEmpty()) {
                continue;
            }
            Link senderBound = new Link(toMe.get(from).bytesPerSecond(), DEFAULT_LINK.roundTrip());
            for (String to : toMe.keySet()) {
                if (!to.equals(from)) {
                    paths.putIfAbsent(from + "->" + to, senderBound);
                }
            }
        }
        return new NetworkModel(toMe, paths, unmeasuredLink(toMe), in.bytesPerSecond, in.incastThreshold,
                in.incastPenalty, in.hopStartup);
    }

    /** What a path from a holder nobody measured is assumed to deliver. */
    private Link unmeasuredLink(Map<String, Link> toMe) {
        double[] measured = toMe.entrySet().stream()
                .filter(e -> toThisNode.rateAge(e.getKey()).isPresent())
                .mapToDouble(e -> e.getValue().bytesPerSecond())
                .toArray();
        if (measured.length == 0) {
            return DEFAULT_LINK;
        }
        double median = RelayTimer.median(measured);
        return new Link(median, DEFAULT_LINK.roundTrip());
    }

    private record Inbound(double bytesPerSecond, int incastThreshold, double incastPenalty, Duration hopStartup) {}
}
