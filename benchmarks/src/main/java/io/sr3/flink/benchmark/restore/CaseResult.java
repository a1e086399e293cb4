package io.sr3.flink.benchmark.restore;

import io.sr3.flink.harness.Stats;
import io.sr3.flink.restore.Link;
import io.sr3.flink.restore.NetworkProbe;
import io.sr3.flink.node.Structure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Everything measured for one scenario at one state size: what the probe found and every restore,
 * and the comparison the bar is made of.
 *
 * @param scenario the network
 * @param stateBytes the state restored
 * @param probe what the probe measured from the first recovering node, before any restore
 * @param runs every restore, in the order they ran
 */
public record CaseResult(Scenario scenario, long stateBytes, NetworkProbe.Measurement probe, List<RestoreRun> runs) {

    /** auto may be at most this much slower than the best forced structure. */
    public static final double AUTO_BAR = 1.10;

    /** auto on a recovering node that ran no probe: what the ring learned in passing. */
    public static final String UNPROBED = RestoreRun.Knowledge.PASSIVE.label();

    /** auto on a recovering node whose light periodic probe swept its links and port once. */
    public static final String LIGHT_PROBE = RestoreRun.Knowledge.LIGHT_PROBE.label();

    /** The structures forced in every case, then auto after a full probe, without one, and after the light probe. */
    public static final List<String> LABELS = List.of("star", "line", "tree", "auto", UNPROBED, LIGHT_PROBE);

    public CaseResult {
        runs = List.copyOf(runs);
    }

    /** Median actual seconds of the runs requested as {@code label} ("star", ..., "auto"). */
    public double seconds(String label) {
        return Stats.of(runs.stream().filter(r -> r.label().equals(label)).map(RestoreRun::actualSeconds).toList()).median();
    }

    /** The forced structure with the lowest median time. */
    public String winner() {
        String best = null;
        for (String label : LABELS.subList(0, 3)) {
            if (best == null || seconds(label) < seconds(best)) {
                best = label;
            }
        }
        return best;
    }

    /** auto's median time over the winner's. */
    public double autoRatio() {
        return ratio("auto");
    }

    /** The median time of the auto runs labelled {@code label} over the winner's. */
    public double ratio(String label) {
        return seconds(label) / seconds(winner());
    }

    public boolean autoWithinBar() {
        return autoRatio() <= AUTO_BAR;
    }

    /** What auto executed, over its repetitions ("line", or "star, tree" when they differed). */
    public String autoChoice() {
        return choice("auto");
    }

    /** What the auto runs labelled {@code label} executed, over their repetitions. */
    public String choice(String label) {
        TreeSet<String> chosen = new TreeSet<>();
        runs.stream().filter(r -> r.label().equals(label)).forEach(r -> chosen.add(RestoreRun.label(r.report().structure())));
        return String.join(", ", chosen);
    }

    /** The model's prediction per structure, as planned by the auto runs (median over repetitions). */
    public Map<String, Double> predicted() {
        Map<String, Double> predicted = new LinkedHashMap<>();
        for (Structure s : Structure.values()) {
            List<Double> values = new ArrayList<>();
            runs.stream().filter(r -> r.label().equals("auto") && r.report().predictedSeconds().containsKey(s))
                    .forEach(r -> values.add(r.report().predictedSeconds().get(s)));
            if (!values.isEmpty()) {
                predicted.put(RestoreRun.label(s), Stats.of(values).median());
            }
        }
        return predicted;
    }

    public Map<String, Object> probeMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        Map<String, Object> links = new LinkedHashMap<>();
        probe.toThisNode().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> links.put(e.getKey(),
                Map.of("MBps", e.getValue().bytesPerSecond() / 1e6, "roundTripMillis", e.getValue().roundTrip().toNanos() / 1e6)));
        m.put("holderToRecovering", links);
        Stats between = Stats.of(probe.between().values().stream().map(l -> l.bytesPerSecond() / 1e6).toList());
        Stats betweenRtt = Stats.of(probe.between().values().stream().map(l -> l.roundTrip().toNanos() / 1e6).toList());
        m.put("betweenHoldersMBps", Map.of("median", between.median(), "min", between.min(), "max", between.max()));
        m.put("betweenHoldersRoundTripMillis", Map.of("median", betweenRtt.median(), "min", betweenRtt.min(), "max", betweenRtt.max()));
        m.put("aggregateMBpsBySenders", probe.aggregateBytesPerSecond().stream().map(r -> r / 1e6).toList());
        m.put("inboundMBps", probe.inboundBytesPerSecond() / 1e6);
        m.put("incastThreshold", probe.incastThreshold());
        m.put("incastPenalty", probe.incastPenalty());
        m.put("hopStartupMillis", probe.hopStartup().toNanos() / 1e6);
        m.put("probeSeconds", probe.elapsed().toMillis() / 1e3);
        Map<String, Object> pairs = new LinkedHashMap<>();
        probe.between().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> pairs.put(e.getKey(),
                e.getValue().bytesPerSecond() / 1e6));
        m.put("betweenHoldersMBpsByPair", pairs);
        return m;
    }

    /** The probe in one line: per-holder links, between-holder median, aggregates and the fit. */
    public String probeLine() {
        Stats toR = Stats.of(probe.toThisNode().values().stream().map(l -> l.bytesPerSecond() / 1e6).toList());
        Stats rtt = Stats.of(probe.toThisNode().values().stream().map(l -> l.roundTrip().toNanos() / 1e6).toList());
        Stats between = Stats.of(probe.between().values().stream().map(Link::bytesPerSecond).map(r -> r / 1e6).toList());
        return String.format(java.util.Locale.ROOT,
                "holder->R %.0f MB/s (%.0f-%.0f), rtt %.1f ms; holder->holder %.0f MB/s (%.0f-%.0f); aggregate by senders %s MB/s; "
                        + "fit: inbound %.0f MB/s, threshold %d, penalty %.2f, hop start-up %.1f ms; probe took %.1f s",
                toR.median(), toR.min(), toR.max(), rtt.median(), between.median(), between.min(), between.max(),
                probe.aggregateBytesPerSecond().stream().map(r -> String.format(java.util.Locale.ROOT, "%.0f", r / 1e6)).toList(),
                probe.inboundBytesPerSecond() / 1e6, probe.incastThreshold(), probe.incastPenalty(),
                probe.hopStartup().toNanos() / 1e6, probe.elapsed().toMillis() / 1e3);
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario.name());
        m.put("stateBytes", stateBytes);
        Map<String, Object> seconds = new LinkedHashMap<>();
        LABELS.forEach(l -> seconds.put(l, seconds(l)));
        m.put("medianSeconds", seconds);
        m.put("autoChose", autoChoice());
        m.put("winner", winner());
        m.put("autoOverBest", autoRatio());
        m.put("autoWithin10Percent", autoWithinBar());
        for (String label : List.of(UNPROBED, LIGHT_PROBE)) {
            m.put(label + "Chose", choice(label));
            m.put(label + "OverBest", ratio(label));
        }
        m.put("predictedSecondsByStructure", predicted());
        m.put("probe", probeMap());
        m.put("runs", runs.stream().map(RestoreRun::toMap).toList());
        return m;
    }
}
