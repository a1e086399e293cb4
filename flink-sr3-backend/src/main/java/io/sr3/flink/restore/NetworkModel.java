package io.sr3.flink.restore;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * What the ring has measured about the network around one recovering node.
 *
 * <p>Links not measured yet fall back to {@code defaultLink}. Incast is modelled as a loss of
 * inbound throughput that grows with the number of concurrent senders beyond {@code
 * incastThreshold}: with {@code n} senders the recovering node receives at {@code inbound / (1 +
 * incastPenalty * max(0, n - incastThreshold))}.
 *
 * @param toRecovering link from each holder (by node id) to the recovering node
 * @param betweenHolders link between two holders, keyed by {@code "from->to"}
 * @param defaultLink used for any pair not measured
 * @param inboundBytesPerSecond what the recovering node can receive in total
 * @param incastThreshold senders the recovering node takes without loss
 * @param incastPenalty relative throughput lost per sender beyond the threshold
 * @param hopStartup fixed cost of setting up one forwarding hop (connection, first block)
 */
public record NetworkModel(
        Map<String, Link> toRecovering,
        Map<String, Link> betweenHolders,
        Link defaultLink,
        double inboundBytesPerSecond,
        int incastThreshold,
        double incastPenalty,
        Duration hopStartup) {

    public NetworkModel {
        toRecovering = Map.copyOf(toRecovering);
        betweenHolders = Map.copyOf(betweenHolders);
        Objects.requireNonNull(defaultLink, "defaultLink");
        Objects.requireNonNull(hopStartup, "hopStartup");
        if (!(inboundBytesPerSecond > 0)) {
            throw new IllegalArgumentException("inboundBytesPerSecond must be positive, was " + inboundBytesPerSecond);
        }
        if (incastThreshold < 1) {
            throw new IllegalArgumentException("incastThreshold must be >= 1, was " + incastThreshold);
        }
        if (incastPenalty < 0) {
            throw new IllegalArgumentException("incastPenalty must be >= 0, was " + incastPenalty);
        }
    }

    /** The same link everywhere: what a LAN without measurements looks like. */
    public static NetworkModel uniform(Link link, double inboundBytesPerSecond) {
        return new NetworkModel(Map.of(), Map.of(), link, inboundBytesPerSecond, 4, 0.0, Duration.ZERO);
    }

    Link toRecovering(String holder) {
        return toRecovering.getOrDefault(holder, defaultLink);
    }

    Link between(String from, String to) {
        return betweenHolders.getOrDefault(from + "->" + to, defaultLink);
    }

    /** Inbound throughput of the recovering node with {@code senders} concurrent streams. */
    double inbound(int senders) {
        return inboundBytesPerSecond / (1 + incastPenalty * Math.max(0, senders - incastThreshold));
    }
}
