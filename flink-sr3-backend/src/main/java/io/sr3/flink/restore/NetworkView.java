package io.sr3.flink.restore;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.Transfer;
import io.sr3.flink.transport.MeasuredLink;

import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * What one node knows about the network around it, kept current from its own transfers, from
 * what the holders of a restore report of theirs ({@link HolderReports}) and from explicit probes,
 * and handed to the planner as a {@link NetworkModel} snapshot.
 *
 * <p>Until something is measured, every link is the default (a 1 Gbit/s LAN with a 0.5 ms round
 * trip) and the planner picks star, the right answer on a uniform LAN.
 */
@ThreadSafe
public final class NetworkView {

    /** What an unmeasured path is assumed to deliver: a 1 Gbit/s LAN. */
    public static final Link DEFAULT_LINK = new Link(125e6, Duration.ofMillis(1).dividedBy(2));

    /** The key of the local read rate among {@link #estimates}. */
    public static final String LOCAL_READS = "local reads";

    private final LongSupplier nanoClock;
    private final LinkEstimator toThisNode;
    /** Links from this node to each peer, learned from the blocks it sent (checkpoint writes, re-replication). */
    private final LinkEstimator fromThisNode;
    /** Links between other nodes, keyed {@code "from->to"}: measured by a probe, or reported by one of their ends. */
    private final Map<String, Heard> between = new ConcurrentHashMap<>();
    /** Links from peers to this node that only the peers measured (what they sent here), by peer. */
    private final Map<String, Heard> reportedToThisNode = new ConcurrentHashMap<>();
    private final HolderLoad holderLoad = new HolderLoad();
    private volatile Inbound inbound = new Inbound(DEFAULT_LINK.bytesPerSecond(), 4, 0.0, Duration.ZERO);
    /** When {@link #inbound} was last probed on {@link #nanoClock}; {@link Long#MIN_VALUE} while it never was. */
    private volatile long inboundMeasuredAt = Long.MIN_VALUE;
    /** When a restore last raised {@link #inbound}'s capacity ({@link #recordInbound}); {@link Long#MIN_VALUE} if none did. */
    private volatile long inboundRaisedAt = Long.MIN_VALUE;
    /** How many holders sent at once when {@link #inboundRaisedAt} was taken. */
    private volatile int inboundRaisedBy;
    /**
     * How fast this node reads and delivers blocks it holds itself (verify, then write to the
     * restore's destination), learned from restores; until then a local disk through the heap.
     */
    private final LinkEstimator localReads = new LinkEstimator(LinkEstimator.DEFAULT_WINDOW,
            new Link(DEFAULT_LOCAL_READ_BYTES_PER_SECOND, Duration.ZERO));

    /** The local read rate assumed before a restore measured one. */
    public static final double DEFAULT_LOCAL_READ_BYTES_PER_SECOND = 200e6;

    public NetworkView() {
        this(System::nanoTime);
    }

    NetworkView(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.toThisNode = new LinkEstimator(LinkEstimator.DEFAULT_WINDOW, DEFAULT_LINK, nanoClock);
        this.fromThisNode = new LinkEstimator(LinkEstimator.DEFAULT_WINDOW, DEFAULT_LINK, nanoClock);
    }

    /**
     * The view of {@code node}, made on first use (at the node's start, by {@link
     * RestoreNodeExtension}); from then on every ping a peer answers is a round trip it learns
     * from, every block read from a peer (repair, reads, relays, restores) or sent to one
     * (checkpoint writes, re-replication) a bandwidth sample, without a probe of its own; and
     * what it measured is what the node reports to peers that ask.
     */
    public static NetworkView of(RingNode node) {
        return node.attachment(NetworkView.class, n -> {
            NetworkView view = new NetworkView();
            String self = n.self().id();
            n.links().onRoundTrip(view.toThisNode()::recordRoundTrip);
            n.links().onTransfer(t -> (t.direction() == Transfer.Direction.RECEIVED ? view.toThisNode : view.fromThisNode)
                    .recordTransfer(t.peer(), t.bytes(), t.elapsed()));
            n.links().reportFrom(() -> view.measuredLinks(self));
            return view;
        });
    }

    /**
     * The links this node measured itself, both directions, for a peer that asks: what each peer
     * delivered here, and what this node could send to each.
     */
    public List<MeasuredLink> measuredLinks(String self) {
        List<MeasuredLink> links = new ArrayList<>();
        toThisNode.links().forEach((peer, link) -> toThisNode.rateAge(peer).ifPresent(
                age -> links.add(new MeasuredLink(peer, self, link.bytesPerSecond(), age))));
        fromThisNode.links().forEach((peer, link) -> fromThisNode.rateAge(peer).ifPresent(
                age -> links.add(new MeasuredLink(self, peer, link.bytesPerSecond(), age))));
        return links.size() > MeasuredLink.MAX_LINKS ? links.subList(0, MeasuredLink.MAX_LINKS) : links;
    }

    /**
     * Records a link {@code reporter} measured: between two other nodes it replaces what was heard
     * of that path before, unless that was measured more recently; towards this node it stands in
     * for a peer this node never measured itself.
     */
    public void hear(MeasuredLink link, String reporter, String self) {
        long measuredAt = nanoClock.getAsLong() - link.age().toNanos();
        Heard heard = new Heard(new Link(link.bytesPerSecond(), DEFAULT_LINK.roundTrip()), measuredAt, reporter);
        if (link.from().equals(self)) {
            return; // what this node sends: its own estimate is first-hand
        }
        Map<String, Heard> target = link.to().equals(self) ? reportedToThisNode : between;
        String key = link.to().equals(self) ? link.from() : link.from() + "->" + link.to();
        target.merge(key, heard, (old, now) -> now.measuredAt >= old.measuredAt ? now : old);
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

    /** {@link #localReadBytesPerSecond} and where it came from, for a restore's log line: "200.0 MB/s: default". */
    public String localReadEstimate() {
        return String.format(java.util.Locale.ROOT, "%.1f MB/s: %s", localReadBytesPerSecond() / 1e6,
                localReads.rateAge("local").map(age -> "measured " + age.toSeconds() + " s ago").orElse("default"));
    }

    /** What each holder still sends for the restores running on this node. */
    public HolderLoad holderLoad() {
        return holderLoad;
    }

    /** Records the measured link from holder {@code from} to holder {@code to}, measured now by a probe. */
    public void setBetween(String from, String to, Link link) {
        between.put(from + "->" + to, new Heard(link, nanoClock.getAsLong(), "probe"));
    }

    /**
     * Records what this node can receive: total inbound rate, the senders it takes without loss
     * and the loss per sender beyond, and the fixed cost of one forwarding hop.
     */
    public synchronized void setInbound(double bytesPerSecond, int incastThreshold, double incastPenalty,
            Duration hopStartup) {
        this.inbound = new Inbound(bytesPerSecond, incastThreshold, incastPenalty, hopStartup);
        this.inboundMeasuredAt = nanoClock.getAsLong();
    }

    /**
     * Records that this node received {@code bytes} from {@code senders} holders at once in
     * {@code elapsed} (a restore's fetches): its port carried at least that much, so an inbound
     * capacity below it (the default, or a probe on a busier day) is raised to it. The incast
     * threshold and penalty stay as they are: one aggregate does not tell them apart.
     */
    public synchronized void recordInbound(long bytes, Duration elapsed, int senders) {
        if (bytes < LinkEstimator.MIN_SAMPLE_BYTES || senders < 2 || elapsed.isZero() || elapsed.isNegative()) {
            return;
        }
        double rate = bytes / (elapsed.toNanos() / 1e9);
        Inbound in = inbound;
        if (rate > in.bytesPerSecond) {
            inbound = new Inbound(rate, in.incastThreshold, in.incastPenalty, in.hopStartup);
            inboundRaisedAt = nanoClock.getAsLong();
            inboundRaisedBy = senders;
        }
    }

    /** Records what this node can receive (see {@link #setInbound}), keeping the hop start-up known so far. */
    public void setInbound(double bytesPerSecond, int incastThreshold, double incastPenalty) {
        setInbound(bytesPerSecond, incastThreshold, incastPenalty, inbound.hopStartup);
    }

    /** How long ago this node's inbound capacity and incast loss were measured; empty while they are the default. */
    public Optional<Duration> inboundAge() {
        long at = inboundMeasuredAt;
        return at == Long.MIN_VALUE ? Optional.empty() : Optional.of(Duration.ofNanos(Math.max(0, nanoClock.getAsLong() - at)));
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
        Map<String, Link> toMe = new HashMap<>(toThisNode.links());
        reportedToThisNode.forEach((peer, heard) -> {
            if (toThisNode.rateAge(peer).isEmpty()) {
                Link own = toMe.get(peer); // keeps a round trip this node measured
                toMe.put(peer, new Link(heard.link.bytesPerSecond(), own != null ? own.roundTrip() : DEFAULT_LINK.roundTrip()));
            }
        });
        Map<String, Link> paths = new HashMap<>();
        between.forEach((path, heard) -> paths.put(path, heard.link));
        for (String from : toMe.keySet()) {
            if (!rateKnown(from)) {
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

    /**
     * Where each estimate the planner uses for {@code holders} comes from, for the restore's log
     * line: this node's inbound port (probed or default), every holder's link to this node
     * (measured here, reported by the holder, or default) and every path between two of them
     * that was measured or reported.
     */
    public Map<String, String> sources(Collection<String> holders) {
        Map<String, String> sources = new HashMap<>();
        long now = nanoClock.getAsLong();
        sources.put("inbound port", inboundSource(now));
        for (String holder : holders) {
            Heard reported = reportedToThisNode.get(holder);
            sources.put(holder, toThisNode.rateAge(holder).isEmpty() && reported != null
                    ? reported.describe(now) + ", " + toThisNode.roundTripSource(holder)
                    : toThisNode.source(holder));
            for (String to : holders) {
                Heard path = between.get(holder + "->" + to);
                if (path != null) {
                    sources.put(holder + "->" + to, path.describe(now));
                }
            }
        }
        return sources;
    }

    private String inboundSource(long now) {
        long probed = inboundMeasuredAt;
        long raised = inboundRaisedAt;
        if (raised != Long.MIN_VALUE && (probed == Long.MIN_VALUE || raised > probed)) {
            return "received from " + inboundRaisedBy + " holders at once " + Math.max(0, (now - raised) / 1_000_000_000L)
                    + " s ago";
        }
        return probed == Long.MIN_VALUE ? "default" : "probed " + Math.max(0, (now - probed) / 1_000_000_000L) + " s ago";
    }

    /**
     * {@link #sources} with the estimate itself in front of each, as the planner sees it now:
     * {@code "40.2 MB/s: rate reported by h2, measured 24 s ago"}, and with {@code ownBlocks}
     * the local read rate ({@link #LOCAL_READS}). For the restore's log line, taken when the
     * restore plans (a restore's own transfers update the estimates afterwards).
     */
    public Map<String, String> estimates(Collection<String> holders, boolean ownBlocks) {
        NetworkModel model = model();
        Map<String, String> estimates = new HashMap<>();
        sources(holders).forEach((key, source) -> {
            int arrow = key.indexOf("->");
            double rate = key.equals("inbound port") ? model.inboundBytesPerSecond()
                    : arrow < 0 ? model.toRecovering(key).bytesPerSecond()
                    : model.between(key.substring(0, arrow), key.substring(arrow + 2)).bytesPerSecond();
            estimates.put(key, String.format(java.util.Locale.ROOT, "%.1f MB/s: %s", rate / 1e6, source));
        });
        if (ownBlocks) {
            estimates.put(LOCAL_READS, localReadEstimate());
        }
        return estimates;
    }

    private boolean rateKnown(String peer) {
        return toThisNode.rateAge(peer).isPresent() || reportedToThisNode.containsKey(peer);
    }

    /** What a path from a holder nobody measured is assumed to deliver. */
    private Link unmeasuredLink(Map<String, Link> toMe) {
        double[] measured = toMe.entrySet().stream()
                .filter(e -> rateKnown(e.getKey()))
                .mapToDouble(e -> e.getValue().bytesPerSecond())
                .toArray();
        if (measured.length == 0) {
            return DEFAULT_LINK;
        }
        double median = RelayTimer.median(measured);
        return new Link(median, DEFAULT_LINK.roundTrip());
    }

    /** A link measured elsewhere: by whom ({@code "probe"} for a probe of this node), and when on this node's clock. */
    private record Heard(Link link, long measuredAt, String reporter) {
        String describe(long nowNanos) {
            long seconds = Math.max(0, (nowNanos - measuredAt) / 1_000_000_000L);
            return "probe".equals(reporter) ? "rate probed " + seconds + " s ago"
                    : "rate reported by " + reporter + ", measured " + seconds + " s ago";
        }
    }

    private record Inbound(double bytesPerSecond, int incastThreshold, double incastPenalty, Duration hopStartup) {}
}
