package io.sr3.flink.transport;

import javax.annotation.concurrent.ThreadSafe;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Gives loopback a topology: delays the answers one node receives as if each had crossed a link
 * of limited bandwidth and fixed latency, then the node's own inbound port, which slows down when
 * many peers send at once (incast). For tests and benchmarks that compare restore structures;
 * production rings never install one.
 *
 * <p>The model is two FIFO queues in virtual time per answer of {@code b} bytes from peer
 * {@code p}: the link {@code p -> this node} is busy for {@code b / rate(p)}, then the inbound port
 * for {@code b / (inbound / (1 + penalty * max(0, senders - threshold)))}, where {@code senders}
 * counts the peers with an answer of at least {@link #MIN_SENDER_BYTES} not yet delivered. The
 * answer is delivered when both are done, plus the link's latency. The bytes themselves cross loopback at full speed; only their
 * delivery to the waiting request is held back.
 */
@ThreadSafe
public final class LinkShaper {

    /** One shaped link: sustained rate and the latency added to each answer. */
    public record ShapedLink(double bytesPerSecond, Duration latency) {
        public ShapedLink {
            Objects.requireNonNull(latency, "latency");
            if (!(bytesPerSecond > 0)) {
                throw new IllegalArgumentException("bytesPerSecond must be positive, was " + bytesPerSecond);
            }
        }
    }

    /** Answers smaller than this (pings, small manifests) do not make their sender count for incast. */
    public static final int MIN_SENDER_BYTES = 64 * 1024;

    private final double inboundBytesPerSecond;
    private final int incastThreshold;
    private final double incastPenalty;
    private final ShapedLink defaultLink;
    private final Map<InetSocketAddress, ShapedLink> links = new HashMap<>();
    private final Map<InetSocketAddress, Long> linkFreeAt = new HashMap<>();
    private final Map<InetSocketAddress, Long> sendingUntil = new HashMap<>();
    private long inboundFreeAt = Long.MIN_VALUE;

    /**
     * @param inboundBytesPerSecond what this node's port receives in total with few senders
     * @param incastThreshold senders the port takes without loss
     * @param incastPenalty relative loss per sender beyond the threshold
     * @param defaultLink the link from any peer not set with {@link #setLink}
     */
    public LinkShaper(double inboundBytesPerSecond, int incastThreshold, double incastPenalty, ShapedLink defaultLink) {
        if (!(inboundBytesPerSecond > 0) || incastThreshold < 1 || incastPenalty < 0) {
            throw new IllegalArgumentException("Invalid inbound shaping: " + inboundBytesPerSecond + " B/s, threshold "
                    + incastThreshold + ", penalty " + incastPenalty);
        }
        this.inboundBytesPerSecond = inboundBytesPerSecond;
        this.incastThreshold = incastThreshold;
        this.incastPenalty = incastPenalty;
        this.defaultLink = Objects.requireNonNull(defaultLink, "defaultLink");
    }

    /** Shapes the link from {@code peer} (its listening address) to this node. */
    public synchronized LinkShaper setLink(InetSocketAddress peer, ShapedLink link) {
        links.put(peer, Objects.requireNonNull(link, "link"));
        return this;
    }

    /** How long to hold back an answer of {@code bytes} that arrived from {@code peer} at {@code nowNanos}. */
    public synchronized long delayNanos(InetSocketAddress peer, int bytes, long nowNanos) {
        ShapedLink link = links.getOrDefault(peer, defaultLink);
        long linkStart = Math.max(nowNanos, linkFreeAt.getOrDefault(peer, Long.MIN_VALUE));
        long linkDone = linkStart + (long) (bytes / link.bytesPerSecond() * 1e9);
        linkFreeAt.put(peer, linkDone);
        if (bytes >= MIN_SENDER_BYTES) {
            // A sender counts for incast until its latest answer is delivered; probes and pings never do.
            sendingUntil.merge(peer, linkDone, Math::max);
        }
        int senders = 0;
        for (long until : sendingUntil.values()) {
            if (until > nowNanos) {
                senders++;
            }
        }
        double inbound = inboundBytesPerSecond / (1 + incastPenalty * Math.max(0, senders - incastThreshold));
        // The port takes bytes as they arrive, from every sender interleaved: an answer queued behind
        // its own slow link holds no port time that another sender's answer could use meanwhile.
        inboundFreeAt = Math.max(nowNanos, inboundFreeAt) + (long) (bytes / inbound * 1e9);
        long delivered = Math.max(linkDone, inboundFreeAt);
        if (bytes >= MIN_SENDER_BYTES) {
            sendingUntil.put(peer, Math.max(sendingUntil.get(peer), delivered));
        }
        return delivered + link.latency().toNanos() - nowNanos;
    }
}
