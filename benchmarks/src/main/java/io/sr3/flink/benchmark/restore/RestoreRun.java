package io.sr3.flink.benchmark.restore;

import io.sr3.flink.restore.RestoreReport;
import io.sr3.flink.node.Structure;

import javax.annotation.Nullable;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One restore of one scenario's state by one requested structure, as the executor reported it.
 *
 * @param repetition 1-based
 * @param requested the forced structure, or null for auto
 * @param knowledge what the recovering node knew of the network when it planned
 * @param report what the executor reported
 * @param learnedMedianLinkBytesPerSecond after the restore: the median link to the recovering node
 *     in its view, i.e. what the executor's own learning made of the probe's numbers
 */
public record RestoreRun(int repetition, @Nullable Structure requested, Knowledge knowledge, RestoreReport report,
        double learnedMedianLinkBytesPerSecond) {

    /** What the recovering node knew of the network before it planned. */
    public enum Knowledge {
        /** A full {@code NetworkProbe} of every link and its inbound port. */
        PROBE("auto"),
        /** Only what ordinary transfers taught it and the holders ({@code LINKS}). */
        PASSIVE("auto-unprobed"),
        /** That, plus one sweep of the light periodic probe ({@code sr3.restore.probe-interval}). */
        LIGHT_PROBE("auto-light-probe");

        private final String label;

        Knowledge(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** "star", "line", "tree", or the auto run's {@link Knowledge#label()}. */
    public String label() {
        return requested == null ? knowledge.label() : label(requested);
    }

    public static String label(@Nullable Structure structure) {
        return structure == null ? "auto" : structure.name().toLowerCase(Locale.ROOT);
    }

    public double actualSeconds() {
        return report.actualSeconds();
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("repetition", repetition);
        m.put("requested", label());
        m.put("executed", label(report.structure()));
        m.put("actualSeconds", report.actualSeconds());
        m.put("predictedSeconds", report.predicted());
        m.put("predictionError", report.predictionError());
        Map<String, Object> all = new LinkedHashMap<>();
        for (Structure s : Structure.values()) {
            if (report.predictedSeconds().containsKey(s)) {
                all.put(label(s), report.predictedSeconds().get(s));
            }
        }
        m.put("predictedSecondsByStructure", all);
        m.put("throughputMBps", report.bytes() / report.actualSeconds() / 1e6);
        m.put("bytes", report.bytes());
        m.put("blocks", report.blocks());
        m.put("refetchedBlocks", report.refetchedBlocks());
        m.put("replans", report.replans());
        m.put("note", report.note());
        m.put("learnedMedianLinkMBpsAfterRestore", learnedMedianLinkBytesPerSecond / 1e6);
        m.put("logLine", report.logLine());
        return m;
    }
}
