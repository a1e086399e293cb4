package io.sr3.flink.benchmark;

import io.sr3.flink.benchmark.restore.CaseResult;
import io.sr3.flink.benchmark.restore.ExactlyOnceSink;
import io.sr3.flink.benchmark.restore.LoopbackBandwidth;
import io.sr3.flink.benchmark.restore.RestoreRun;
import io.sr3.flink.benchmark.restore.Scenario;
import io.sr3.flink.benchmark.restore.ShapedRing;
import io.sr3.flink.benchmark.restore.StructuresReport;
import io.sr3.flink.harness.BenchmarkMain;
import io.sr3.flink.harness.MachineDescription;
import io.sr3.flink.harness.Stats;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.restore.BlockFetch;
import io.sr3.flink.restore.Link;
import io.sr3.flink.restore.LinkProbe;
import io.sr3.flink.restore.NetworkProbe;
import io.sr3.flink.restore.NetworkView;
import io.sr3.flink.restore.RestoreExecutor;
import io.sr3.flink.restore.RestoreReport;
import io.sr3.flink.node.RestoreSettings;
import io.sr3.flink.node.Structure;

import javax.annotation.Nullable;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Star, line, tree and the planner's own choice (auto), restoring the same state over the same
 * shaped network, in one invocation; and how well the planner predicted each.
 *
 * <p>Per scenario ({@link Scenario#all()}) and state size: fresh holders in this JVM, each link
 * shaped by a {@code LinkShaper}; the state written as random 1 MiB blocks straight into the
 * holders' stores, two replicas each, round robin; a {@link NetworkProbe} from a recovering node
 * so that the planner plans from measurements; then one restore per structure, each into a fresh
 * recovering node that starts from the probe's numbers. A fresh node per restore keeps the runs
 * independent: the executor learns link rates from every restore it runs, and what it learns under
 * one structure would tilt the next plan.
 *
 * <p>Usage: {@code mvn -B -q -pl benchmarks exec:exec@restore-benchmark} (after {@code mvn -B -q
 * install -DskipTests}); the only argument is the results directory, where
 * {@code restore-structures-<date>-<commit>.md} and {@code .json} are written. {@code -Dsr3.bench.sizes=16m}
 * (comma separated, k/m/g suffixes) replaces the base sizes for a smoke run, and
 * {@code -Dsr3.bench.scenarios=incast,lan} runs only the scenarios named. Exit code 0 whether or
 * not the bar is met, 2 on errors.
 */
public final class RestoreStructuresBenchmark {

    static final String COMMAND = "mvn -B -q install -DskipTests && mvn -B -q -pl benchmarks exec:exec@restore-benchmark";
    /** Base state sizes; a scenario multiplies them by its size factor. */
    static final String DEFAULT_SIZES = "64m,1g";
    /** Cases below this base size run five times (the median is reported: they last a fraction of a second), larger ones once. */
    static final long REPEAT_BELOW = 1L << 30;
    /** Fan-in 2 and 8 blocks in flight: the option defaults. */
    static final RestoreSettings SETTINGS = new RestoreSettings(null, 2, 8, RestoreSettings.DEFAULT_PREFETCH_MAX_BYTES);
    /** Blocks each node reads from each peer it learns a link from, in the runs without a probe: a couple of reads. */
    static final int LEARNING_READS = 2;

    /** 1 MiB probe blocks, 3 samples per median, as many blocks in flight as the restores keep. */
    static final NetworkProbe.Settings PROBE = new NetworkProbe.Settings(1 << 20, 3, SETTINGS.maxConcurrentFetches());
    static final long LOOPBACK_WARM_UP = 64L << 20;
    static final long LOOPBACK_BYTES = 512L << 20;
    /** Enough blocks through every structure that the JIT compiler is done with the paths a restore takes before a case is measured. */
    static final long WARM_UP_BYTES = 512L << 20;
    private static final Structure[] ORDER = {Structure.STAR, Structure.LINE, Structure.TREE, null};

    private RestoreStructuresBenchmark() {}

    public static void main(String[] args) {
        BenchmarkMain.run("RestoreStructuresBenchmark", args, RestoreStructuresBenchmark::run);
    }

    private static int run(Path tmp, Path results) throws Exception {
        long start = System.nanoTime();
        MachineDescription machine = MachineDescription.ofThisMachine();
        List<Long> sizes = parseSizes(System.getProperty("sr3.bench.sizes", DEFAULT_SIZES));
        double loopback = LoopbackBandwidth.measure(LOOPBACK_WARM_UP, LOOPBACK_BYTES);
        say("loopback TCP, one stream: %.0f MB/s", loopback / 1e6);
        warmUp(tmp.resolve("restore-structures").resolve("warm-up"));
        List<CaseResult> cases = new ArrayList<>();
        List<String> only = List.of(System.getProperty("sr3.bench.scenarios", "").split(","));
        for (Scenario scenario : Scenario.all()) {
            if (!only.equals(List.of("")) && !only.contains(scenario.name())) {
                continue;
            }
            say("%s: %s", scenario.name(), scenario.describe());
            for (long base : sizes) {
                cases.add(runCase(scenario, base * scenario.sizeFactor(), base < REPEAT_BELOW ? 5 : 1,
                        tmp.resolve("restore-structures").resolve(scenario.name() + "-" + base * scenario.sizeFactor())));
            }
        }
        StructuresReport report = new StructuresReport(COMMAND, machine, loopback, parameters(sizes), cases,
                (System.nanoTime() - start) / 1e9);
        List<Path> written = report.write(results);
        report.barLines().forEach(l -> say("%s", l));
        say("wrote %s in %.0f s", written, report.seconds());
        return 0;
    }

    /**
     * Restores {@link #WARM_UP_BYTES} by every structure over plain loopback, unrecorded: the
     * first restores of a JVM run interpreted code, and the first case measured would pay for it.
     */
    private static void warmUp(Path dir) throws Exception {
        long start = System.nanoTime();
        try (ShapedRing ring = ShapedRing.start(Scenario.named("lan"), dir)) {
            List<BlockFetch> blocks = ring.placeState(WARM_UP_BYTES);
            for (Structure structure : ORDER) {
                try (RingNode recovering = ring.startRecovering()) {
                    ExactlyOnceSink sink = new ExactlyOnceSink(blocks);
                    new RestoreExecutor(recovering, SETTINGS.withForced(structure)).restore("warm-up", blocks, sink);
                    sink.checkComplete();
                }
            }
        }
        say("warm-up: %s restored by every structure (not recorded) in %.1f s", Stats.bytes(WARM_UP_BYTES),
                (System.nanoTime() - start) / 1e9);
    }

    private static CaseResult runCase(Scenario scenario, long stateBytes, int repetitions, Path dir) throws Exception {
        try (ShapedRing ring = ShapedRing.start(scenario, dir)) {
            long placing = System.nanoTime();
            List<BlockFetch> blocks = ring.placeState(stateBytes);
            say("  %s: %d blocks placed on %d holders (2 replicas) in %.1f s", Stats.bytes(stateBytes), blocks.size(),
                    scenario.holders(), (System.nanoTime() - placing) / 1e9);
            NetworkProbe.Measurement probe;
            try (RingNode prober = ring.startRecovering()) {
                probe = new NetworkProbe(prober, PROBE).probe(ring.holders());
            }
            say("  probe: %s", probe.summary());
            ring.exchangeBetweenNeighbours(blocks, LEARNING_READS);
            List<RestoreRun> runs = new ArrayList<>();
            for (int repetition = 1; repetition <= repetitions; repetition++) {
                String description = scenario.name() + " state of " + Stats.bytes(stateBytes);
                for (Structure requested : ORDER) {
                    runs.add(restore(ring, probe, blocks, requested, repetition, description));
                }
                runs.add(restore(ring, null, blocks, null, repetition, description));
                runs.add(restore(ring, null, true, blocks, null, repetition, description));
            }
            CaseResult result = new CaseResult(scenario, stateBytes, probe, runs);
            say("  %s: star %.2f s, line %.2f s, tree %.2f s, auto %.2f s (chose %s): winner %s, auto/best %.2f; "
                            + "without a probe %.2f s (chose %s), /best %.2f",
                    Stats.bytes(stateBytes), result.seconds("star"), result.seconds("line"), result.seconds("tree"),
                    result.seconds("auto"), result.autoChoice(), result.winner(), result.autoRatio(),
                    result.seconds(CaseResult.UNPROBED), result.choice(CaseResult.UNPROBED), result.ratio(CaseResult.UNPROBED));
            say("  %s: after one sweep of the light probe %.2f s (chose %s), /best %.2f", Stats.bytes(stateBytes),
                    result.seconds(CaseResult.LIGHT_PROBE), result.choice(CaseResult.LIGHT_PROBE),
                    result.ratio(CaseResult.LIGHT_PROBE));
            return result;
        }
    }

    /**
     * One restore on a fresh recovering node that starts from {@code probe}'s numbers, or, with no
     * probe, from two blocks it reads from every holder first.
     */
    private static RestoreRun restore(ShapedRing ring, @Nullable NetworkProbe.Measurement probe, List<BlockFetch> blocks,
            @Nullable Structure requested, int repetition, String description) throws Exception {
        return restore(ring, probe, false, blocks, requested, repetition, description);
    }

    /** As above; with {@code lightProbe} (and no probe) the node also sweeps the light periodic probe once. */
    private static RestoreRun restore(ShapedRing ring, @Nullable NetworkProbe.Measurement probe, boolean lightProbe,
            List<BlockFetch> blocks, @Nullable Structure requested, int repetition, String description) throws Exception {
        try (RingNode recovering = ring.startRecovering()) {
            RestoreRun.Knowledge knowledge = probe != null ? RestoreRun.Knowledge.PROBE
                    : lightProbe ? RestoreRun.Knowledge.LIGHT_PROBE : RestoreRun.Knowledge.PASSIVE;
            if (probe != null) {
                probe.applyTo(NetworkView.of(recovering));
            } else {
                ring.readFromEveryHolder(recovering, blocks, LEARNING_READS);
            }
            if (lightProbe && LinkProbe.sweep(recovering) > 0) {
                say("    light probe: a run failed (see the log); restoring with what it measured");
            }
            ExactlyOnceSink sink = new ExactlyOnceSink(blocks);
            RestoreReport report = new RestoreExecutor(recovering, SETTINGS.withForced(requested)).restore(description, blocks, sink);
            sink.checkComplete();
            double learned = Stats.of(NetworkView.of(recovering).model().toRecovering().values().stream()
                    .map(Link::bytesPerSecond).toList()).median();
            say("    rep %d %-4s -> %-4s predicted %6.2f s, actual %6.2f s (%4.0f MB/s), error %3.0f%%", repetition,
                    RestoreRun.label(requested), RestoreRun.label(report.structure()), report.predicted(), report.actualSeconds(),
                    report.bytes() / report.actualSeconds() / 1e6, 100 * report.predictionError());
            return new RestoreRun(repetition, requested, knowledge, report, learned);
        }
    }

    private static Map<String, Object> parameters(List<Long> sizes) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("baseStateSizes", sizes.stream().map(Stats::bytes).toList() + " (large-state restores twice these)");
        p.put("repetitions", "cases with a base size below 1 GiB ran five times (median reported), the others once; order per "
                + "repetition: star, line, tree, auto; before the first case, " + Stats.bytes(WARM_UP_BYTES) + " restored by "
                + "every structure over plain loopback and not recorded (JIT warm-up)");
        p.put("ring", "one recovering node R + the scenario's holders, in this JVM on 127.0.0.1, own store per node, fsync off, "
                + "block size 1 MiB, max frame 4 MiB, request timeout 30 s; state written straight into the holders' stores as "
                + "random 1 MiB blocks, 2 replicas each (block i on holders i and i+1 mod n), never on R, and flushed to disk "
                + "(sync) before the restores");
        p.put("shaping", "a LinkShaper on R (each holder's link to R, R's inbound port with its incast penalty) and on every "
                + "holder (links from the other holders; its own port unlimited); lan: none");
        p.put("restoreSettings", "treeFanIn " + SETTINGS.treeFanIn() + ", maxConcurrentFetches " + SETTINGS.maxConcurrentFetches());
        p.put("probe", "NetworkProbe from a fresh R once per case before the restores: probe blocks of "
                + Stats.bytes(PROBE.probeBytes()) + ", " + PROBE.samples() + " samples per median; every restore then runs on "
                + "a fresh R whose NetworkView starts from the probe's numbers (the executor's own learning from earlier "
                + "restores would otherwise tilt later plans)");
        p.put("sink", "checks every block index arrives exactly once with its manifest length (CRC32C already verified by "
                + "the relay), drops the bytes where they arrived (no copy)");
        p.put("predictionError", "|actual - predicted| / actual of the executed structure, per run");
        return p;
    }

    /** "64m,1g" -> bytes. */
    static List<Long> parseSizes(String spec) {
        return Arrays.stream(spec.split(",")).map(String::trim).filter(s -> !s.isEmpty()).map(s -> {
            char unit = Character.toLowerCase(s.charAt(s.length() - 1));
            int shift = switch (unit) {
                case 'k' -> 10;
                case 'm' -> 20;
                case 'g' -> 30;
                default -> 0;
            };
            String digits = shift == 0 ? s : s.substring(0, s.length() - 1);
            return Long.parseLong(digits) << shift;
        }).toList();
    }

    private static void say(String format, Object... args) {
        System.out.println("[restore-structures] " + String.format(Locale.ROOT, format, args));
        System.out.flush();
    }
}
