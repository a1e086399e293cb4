package io.sr3.flink.benchmark.restore;

import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.LinkShaper;
import io.sr3.flink.transport.LinkShaper.ShapedLink;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One network a restore crosses: how many holders, how their links to the recovering node and to
 * each other are shaped, and what the recovering node's inbound port takes. Each scenario is a
 * regime where the cost model says one structure wins.
 *
 * @param name the scenario's name in the result files
 * @param meaning what the network stands for and which structure the model expects to win
 * @param holders nodes holding the state (two replicas of every block)
 * @param toRecovering each holder's link to the recovering node; null for plain loopback
 * @param betweenHolders every link between two holders; null for plain loopback
 * @param inboundBytesPerSecond the recovering node's inbound port
 * @param incastThreshold senders the inbound port takes without loss
 * @param incastPenalty relative inbound loss per sender beyond the threshold
 * @param sizeFactor how many times the base state sizes this scenario restores
 * @param tuning where the numbers differ from the brief's, and why; empty when they do not
 */
public record Scenario(
        String name,
        String meaning,
        int holders,
        @Nullable ShapedLink toRecovering,
        @Nullable ShapedLink betweenHolders,
        double inboundBytesPerSecond,
        int incastThreshold,
        double incastPenalty,
        int sizeFactor,
        String tuning) {

    private static final double MB = 1e6;

    /** Holders' own ports are not what a scenario is about: they take anything. */
    private static final double UNLIMITED = 1e12;

    public Scenario {
        if ((toRecovering == null) != (betweenHolders == null)) {
            throw new IllegalArgumentException("Scenario " + name + " shapes only some of its links");
        }
    }

    /**
     * The four scenarios. Rates are the brief's except where the shaper could not produce the
     * regime with them; {@link #tuning()} says where and why.
     */
    public static List<Scenario> all() {
        return List.of(
                new Scenario("lan", "plain loopback, nothing shaped: only the ring's own CPU cost on this machine limits "
                        + "a restore; on a real LAN that is star's regime",
                        4, null, null, 0, 0, 0, 1, ""),
                new Scenario("wan-chain", "holders sit together behind a WAN link to the recovering node that carries one "
                        + "stream well and collapses under several: line's regime",
                        4, link(160, 20), link(400, 0.2), 160 * MB, 1, 1.0, 1, ""),
                new Scenario("incast", "eight holders on a LAN whose switch port to the recovering node loses throughput "
                        + "beyond two concurrent senders: tree's regime",
                        8, link(100, 1), link(100, 1), 400 * MB, 2, 0.5, 1, ""),
                new Scenario("large-state", "eight holders on a LAN with an inbound port that takes all of them at once, "
                        + "twice the state: star's regime",
                        8, link(200, 0.5), link(200, 0.5), 800 * MB, 8, 0.0, 2, ""));
    }

    /** The scenario called {@code name}. */
    public static Scenario named(String name) {
        return all().stream().filter(s -> s.name.equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("No scenario named " + name));
    }

    private static ShapedLink link(double megabytesPerSecond, double latencyMillis) {
        return new ShapedLink(megabytesPerSecond * MB, Duration.ofNanos((long) (latencyMillis * 1e6)));
    }

    public boolean shaped() {
        return toRecovering != null;
    }

    /** What the recovering node receives through: every holder's link, then the inbound port. */
    public LinkShaper recoveringShaper(List<Member> holderMembers) {
        LinkShaper shaper = new LinkShaper(inboundBytesPerSecond, incastThreshold, incastPenalty, toRecovering);
        holderMembers.forEach(h -> shaper.setLink(h.address(), toRecovering));
        return shaper;
    }

    /** What a holder receives through: the links from the other holders, and a port that takes anything. */
    public LinkShaper holderShaper() {
        return new LinkShaper(UNLIMITED, holders, 0, betweenHolders);
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("meaning", meaning);
        m.put("holders", holders);
        m.put("shaped", shaped());
        if (shaped()) {
            m.put("holderToRecoveringMBps", toRecovering.bytesPerSecond() / MB);
            m.put("holderToRecoveringLatencyMillis", toRecovering.latency().toNanos() / 1e6);
            m.put("betweenHoldersMBps", betweenHolders.bytesPerSecond() / MB);
            m.put("betweenHoldersLatencyMillis", betweenHolders.latency().toNanos() / 1e6);
            m.put("recoveringInboundMBps", inboundBytesPerSecond / MB);
            m.put("incastThreshold", incastThreshold);
            m.put("incastPenalty", incastPenalty);
        }
        m.put("sizeFactor", sizeFactor);
        m.put("tuning", tuning());
        return m;
    }

    /** One line for the result table. */
    public String describe() {
        if (!shaped()) {
            return holders + " holders, plain loopback";
        }
        return String.format(java.util.Locale.ROOT,
                "%d holders; holder->R %.0f MB/s, %.1f ms; holder<->holder %.0f MB/s, %.1f ms; R inbound %.0f MB/s, "
                        + "incast threshold %d, penalty %.2f%s",
                holders, toRecovering.bytesPerSecond() / MB, toRecovering.latency().toNanos() / 1e6,
                betweenHolders.bytesPerSecond() / MB, betweenHolders.latency().toNanos() / 1e6, inboundBytesPerSecond / MB,
                incastThreshold, incastPenalty, sizeFactor == 1 ? "" : "; state x" + sizeFactor);
    }
}
