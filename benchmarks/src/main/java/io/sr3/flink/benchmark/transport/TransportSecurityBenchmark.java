package io.sr3.flink.benchmark.transport;

import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.tls.TestCertificates;
import io.sr3.flink.transport.TransportLimits;
import io.sr3.flink.transport.TransportSecurity;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;

/**
 * Block throughput between two ring nodes over loopback with each kind of connection security,
 * side by side in one JVM: plaintext (no authentication), the shared secret (sealed frames)
 * and mutual TLS. Rounds alternate the modes; each round writes {@code blocks} blocks of 4 MiB
 * from one node to the other (4 in flight) and reads them back. Writes the medians and their
 * ratios to plaintext into {@code <results>/transport-security-<date>.{json,md}}.
 *
 * <p>Run: {@code mvn -pl benchmarks exec:exec@transport-security-benchmark}
 */
public final class TransportSecurityBenchmark {

    private static final int BLOCK = 4 * 1024 * 1024;
    private static final int IN_FLIGHT = 4;

    private TransportSecurityBenchmark() {}

    /**
     * One round in one mode: throughput in MB/s (10^6 bytes), and the CPU time both nodes spent per
     * MiB moved, which the other work on a shared machine disturbs far less than the throughput.
     */
    record Round(String mode, int round, double writeMBps, double readMBps, double writeCpuMsPerMiB,
            double readCpuMsPerMiB, double writeUserMsPerMiB, double readUserMsPerMiB) {}

    public static void main(String[] args) throws Exception {
        Path results = Paths.get(args.length > 0 ? args[0] : "benchmarks/results");
        int blocks = Integer.getInteger("sr3.bench.blocks", 64);
        int rounds = Integer.getInteger("sr3.bench.rounds", 3);
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
        Files.createDirectories(tmp);
        Path work = Files.createTempDirectory(tmp, "sr3-transport-bench");
        TestCertificates ca = TestCertificates.newCa(work.resolve("tls"), "bench-ca");
        Path keystore = ca.node("bench-node");
        Map<String, TransportSecurity> modes = new LinkedHashMap<>();
        modes.put("plaintext", new TransportSecurity(null, null, true));
        modes.put("secret", TransportSecurity.ofSecret("benchmark-secret"));
        modes.put("tls", new TransportSecurity(ca.settings(keystore), null, false));
        String only = System.getProperty("sr3.bench.modes"); // e.g. "plaintext" while working on the data path
        if (only != null) {
            modes.keySet().retainAll(List.of(only.split(",")));
        }
        byte[] data = new byte[BLOCK];
        new Random(42).nextBytes(data);

        List<Round> all = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            for (Map.Entry<String, TransportSecurity> mode : modes.entrySet()) {
                Round r = run(mode.getKey(), round, mode.getValue(), work.resolve(mode.getKey() + "-" + round), data,
                        blocks);
                System.out.printf("[transport] round %d %-9s write %7.1f MB/s %5.2f CPU ms/MiB (user %5.2f)  read "
                        + "%7.1f MB/s %5.2f CPU ms/MiB (user %5.2f)%n", round, r.mode(), r.writeMBps(),
                        r.writeCpuMsPerMiB(), r.writeUserMsPerMiB(), r.readMBps(), r.readCpuMsPerMiB(),
                        r.readUserMsPerMiB());
                all.add(r);
            }
        }
        write(results, all, blocks, rounds);
    }

    private static Round run(String mode, int round, TransportSecurity security, Path dir, byte[] data, int blocks)
            throws Exception {
        NodeConfig base = NodeConfig.defaults().withTransport(security, TransportLimits.defaults());
        try (RingNode writer = RingNode.start(base.withPortAndStore(0, dir.resolve("writer")));
                RingNode holder = RingNode.start(base.withPortAndStore(0, dir.resolve("holder")))) {
            writer.put(holder.self(), "b-warmup-0", data).get(); // connection and TLS handshake outside the timing
            long cpu = processCpuNanos();
            long user = javaUserNanos();
            long start = System.nanoTime();
            each(blocks, i -> writer.put(holder.self(), "b-bench-" + i, data));
            double writeSeconds = (System.nanoTime() - start) / 1e9;
            long writeCpu = processCpuNanos() - cpu;
            long writeUser = javaUserNanos() - user;
            cpu = processCpuNanos();
            user = javaUserNanos();
            start = System.nanoTime();
            each(blocks, i -> writer.get(holder.self(), "b-bench-" + i).thenApply(bytes -> {
                if (bytes.length != data.length) {
                    throw new IllegalStateException("read " + bytes.length + " bytes of block " + i);
                }
                return null;
            }));
            double readSeconds = (System.nanoTime() - start) / 1e9;
            long readCpu = processCpuNanos() - cpu;
            long readUser = javaUserNanos() - user;
            double megabytes = (double) blocks * data.length / 1e6;
            double mebibytes = (double) blocks * data.length / (1 << 20);
            return new Round(mode, round, megabytes / writeSeconds, megabytes / readSeconds,
                    writeCpu / 1e6 / mebibytes, readCpu / 1e6 / mebibytes, writeUser / 1e6 / mebibytes,
                    readUser / 1e6 / mebibytes);
        }
    }

    /**
     * User-mode CPU time of this JVM's Java threads: the code's own share, without the kernel's
     * (socket and page-cache copies) and without the garbage collector's threads.
     */
    private static long javaUserNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (long id : threads.getAllThreadIds()) {
            long nanos = threads.getThreadUserTime(id);
            total += Math.max(0, nanos);
        }
        return total;
    }

    /** CPU time of this whole JVM: both nodes, their network threads and the garbage collector. */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** Runs {@code operation(i)} for i in [0, count) with at most {@link #IN_FLIGHT} outstanding, and waits for all. */
    private static void each(int count, java.util.function.IntFunction<CompletableFuture<?>> operation) throws Exception {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        List<CompletableFuture<?>> all = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            slots.acquire();
            CompletableFuture<?> f = operation.apply(i);
            f.whenComplete((ignored, error) -> slots.release());
            all.add(f);
        }
        CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get();
    }

    private static double median(List<Round> rounds, String mode, java.util.function.ToDoubleFunction<Round> value) {
        List<Double> values = new ArrayList<>();
        for (Round r : rounds) {
            if (r.mode().equals(mode)) {
                values.add(value.applyAsDouble(r));
            }
        }
        values.sort(Comparator.naturalOrder());
        return values.get(values.size() / 2);
    }

    private static void write(Path results, List<Round> rounds, int blocks, int roundCount) throws IOException {
        Files.createDirectories(results);
        String name = "transport-security-" + LocalDate.now();
        StringBuilder json = new StringBuilder("{\n  \"blocks\": " + blocks + ", \"blockBytes\": " + BLOCK
                + ", \"inFlight\": " + IN_FLIGHT + ", \"rounds\": " + roundCount + ",\n  \"runs\": [\n");
        for (int i = 0; i < rounds.size(); i++) {
            Round r = rounds.get(i);
            json.append(String.format(java.util.Locale.ROOT,
                    "    {\"mode\": \"%s\", \"round\": %d, \"writeMBps\": %.1f, \"readMBps\": %.1f, "
                            + "\"writeCpuMsPerMiB\": %.3f, \"readCpuMsPerMiB\": %.3f, \"writeUserMsPerMiB\": %.3f, "
                            + "\"readUserMsPerMiB\": %.3f}%s%n", r.mode(), r.round(),
                    r.writeMBps(), r.readMBps(), r.writeCpuMsPerMiB(), r.readCpuMsPerMiB(), r.writeUserMsPerMiB(),
                    r.readUserMsPerMiB(),
                    i + 1 < rounds.size() ? "," : ""));
        }
        json.append("  ]\n}\n");
        Path jsonFile = results.resolve(name + ".json");
        Files.writeString(jsonFile, json);
        String plot = ResultPlots.writeAndEmbed(jsonFile, "Ring throughput and CPU per MiB by connection security");

        double plainWrite = median(rounds, "plaintext", Round::writeMBps);
        double plainRead = median(rounds, "plaintext", Round::readMBps);
        StringBuilder md = new StringBuilder("# Ring block throughput by connection security (" + LocalDate.now()
                + ")\n\nTwo ring nodes in one JVM over loopback; " + blocks + " blocks of 4 MiB per round, "
                + IN_FLIGHT + " in flight, " + roundCount + " rounds alternating the modes; medians. "
                + "`mvn -pl benchmarks exec:exec@transport-security-benchmark`. 2 shared cores: +-30%.\n\n"
                + "CPU is this JVM's (both nodes, kernel time and the garbage collector included) per MiB moved; user "
                + "is the user-mode time of its Java threads alone.\n\n" + plot
                + "| mode | write MB/s | read MB/s | write / plaintext | read / plaintext | write CPU ms/MiB "
                + "| read CPU ms/MiB | write user ms/MiB | read user ms/MiB |\n|---|---|---|---|---|---|---|---|---|\n");
        for (String mode : List.of("plaintext", "secret", "tls")) {
            if (rounds.stream().noneMatch(r -> r.mode().equals(mode))) {
                continue;
            }
            double w = median(rounds, mode, Round::writeMBps);
            double r = median(rounds, mode, Round::readMBps);
            md.append(String.format(java.util.Locale.ROOT, "| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |%n",
                    mode, w, r, w / plainWrite, r / plainRead, median(rounds, mode, Round::writeCpuMsPerMiB),
                    median(rounds, mode, Round::readCpuMsPerMiB), median(rounds, mode, Round::writeUserMsPerMiB),
                    median(rounds, mode, Round::readUserMsPerMiB)));
        }
        Files.writeString(results.resolve(name + ".md"), md);
        System.out.println(md);
    }
}
