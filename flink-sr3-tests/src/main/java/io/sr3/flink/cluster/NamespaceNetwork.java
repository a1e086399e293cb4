package io.sr3.flink.cluster;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A small network of Linux network namespaces whose links the kernel shapes: host {@code i}
 * ({@code 1..hosts}) is a namespace with one veth into a bridge in this namespace, which has the
 * bridge address {@code .254} and reaches every host. Each host's inbound traffic leaves the
 * bridge through the host's veth, where an HTB qdisc gives every sending host its own class: the
 * rate of the link {@code from -> to} ({@link #shapeLink}), under the host's inbound port
 * ({@link #shapeInbound}). Each link queues at most {@link #QUEUE_MILLIS} of its rate, as a switch
 * port does (Linux's default queue of 1,000 packets would hold seconds of a slow link: every
 * packet behind a bulk transfer would wait that long). Traffic from the bridge address (the
 * JobManager, the benchmark) is not shaped. The kernel here has HTB, bfifo and u32 but no netem:
 * rates are shaped, latency is not.
 *
 * <p>Processes run in a host with {@link #commandPrefix}. Everything is named after this JVM's
 * PID and removed by {@link #close} (and by a shutdown hook if the JVM exits first). Needs root
 * (CAP_NET_ADMIN) and {@code ip}/{@code tc}: see {@link #unavailableReason()}.
 */
@NotThreadSafe
public final class NamespaceNetwork implements AutoCloseable {

    /** Unshaped traffic (from the bridge address) and the default inbound port: far above what 2 cores move. */
    private static final long UNLIMITED_BITS = 10_000_000_000L;
    private static final int DEFAULT_CLASS = 999;
    /** How long a link's queue takes to drain at its rate. */
    static final int QUEUE_MILLIS = 50;

    private final int hosts;
    private final String tag = String.valueOf(ProcessHandle.current().pid());
    private final String subnet;
    private final String bridge = "sr3b" + tag;
    private final List<String> created = new ArrayList<>();
    /** {@code <device><class id>} of every u32 filter installed, so a rate change only replaces the class. */
    private final Set<String> filtered = new HashSet<>();
    private final Thread cleanup = new Thread(this::removeQuietly, "namespace-network-cleanup");
    private boolean closed;

    private NamespaceNetwork(int hosts, String subnet) {
        this.hosts = hosts;
        this.subnet = subnet;
    }

    /**
     * Why this machine cannot build the network (not root, no {@code ip netns}, no HTB), or null
     * when it can. Tries it out on a throwaway namespace.
     */
    public static String unavailableReason() {
        try {
            String uid = run(List.of("id", "-u")).trim();
            if (!"0".equals(uid)) {
                return "network namespaces and tc need root (CAP_NET_ADMIN); this process runs as uid " + uid;
            }
            try (NamespaceNetwork probe = create(1)) {
                probe.shapeInbound(1, 1_000_000);
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getMessage();
        }
    }

    /** Builds {@code hosts} namespaces on a fresh bridge, every link unshaped. */
    public static NamespaceNetwork create(int hosts) throws IOException {
        if (hosts < 1 || hosts > 200) {
            throw new IllegalArgumentException("hosts must be 1..200, was " + hosts);
        }
        NamespaceNetwork network = new NamespaceNetwork(hosts, freeSubnet());
        Runtime.getRuntime().addShutdownHook(network.cleanup);
        try {
            network.build();
            return network;
        } catch (IOException | RuntimeException e) {
            network.close();
            throw e;
        }
    }

    private void build() throws IOException {
        ip("link", "add", bridge, "type", "bridge");
        created.add("link:" + bridge);
        ip("addr", "add", bridgeAddress() + "/24", "dev", bridge);
        ip("link", "set", bridge, "up");
        for (int i = 1; i <= hosts; i++) {
            String ns = namespace(i);
            ip("netns", "add", ns);
            created.add("netns:" + ns);
            String outside = "sr3h" + tag + "x" + i;
            String inside = "sr3n" + tag + "x" + i;
            ip("link", "add", outside, "type", "veth", "peer", "name", inside);
            created.add("link:" + outside);
            ip("link", "set", inside, "netns", ns);
            ip("link", "set", outside, "master", bridge);
            ip("link", "set", outside, "up");
            inNamespace(i, "ip", "addr", "add", host(i) + "/24", "dev", inside);
            inNamespace(i, "ip", "link", "set", inside, "up");
            inNamespace(i, "ip", "link", "set", "lo", "up");
            resetShaping(i, UNLIMITED_BITS / 8);
        }
    }

    /** The address of host {@code i} (1-based). */
    public String host(int i) {
        checkHost(i);
        return subnet + "." + i;
    }

    /** The bridge's address in this namespace: where processes outside the hosts listen (the JobManager). */
    public String bridgeAddress() {
        return subnet + ".254";
    }

    public int hosts() {
        return hosts;
    }

    /** The words that run a command inside host {@code i}: {@code ip netns exec <namespace>}. */
    public List<String> commandPrefix(int i) {
        checkHost(i);
        return List.of("ip", "netns", "exec", namespace(i));
    }

    /**
     * Sets host {@code to}'s inbound port to {@code bytesPerSecond} and every link into it to the
     * same rate; {@link #shapeLink} then narrows single links.
     */
    public void shapeInbound(int to, long bytesPerSecond) throws IOException {
        resetShaping(to, bytesPerSecond);
    }

    /** Limits what host {@code from} sends to host {@code to} to {@code bytesPerSecond}. */
    public void shapeLink(int from, int to, long bytesPerSecond) throws IOException {
        checkHost(from);
        checkHost(to);
        if (from == to) {
            throw new IllegalArgumentException("A host's link to itself is its loopback: not shaped");
        }
        String dev = outside(to);
        String classId = "1:" + (10 + from);
        tc("class", "replace", "dev", dev, "parent", "1:1", "classid", classId, "htb", "rate", bits(bytesPerSecond),
                "ceil", bits(bytesPerSecond), "burst", burst(bytesPerSecond), "cburst", burst(bytesPerSecond));
        tc("qdisc", "replace", "dev", dev, "parent", classId, "handle", (10 + from) + ":", "bfifo", "limit",
                String.valueOf(Math.max(128 * 1024, bytesPerSecond * QUEUE_MILLIS / 1000)));
        if (!filtered.contains(dev + classId)) {
            tc("filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip", "src",
                    host(from) + "/32", "flowid", classId);
            filtered.add(dev + classId);
        }
    }

    private void resetShaping(int to, long bytesPerSecond) throws IOException {
        checkHost(to);
        String dev = outside(to);
        run(List.of("tc", "qdisc", "del", "dev", dev, "root"), true);
        filtered.removeIf(key -> key.startsWith(dev + "1:"));
        tc("qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", String.valueOf(DEFAULT_CLASS),
                "r2q", "1000");
        tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", bits(bytesPerSecond), "ceil",
                bits(bytesPerSecond), "burst", burst(bytesPerSecond), "cburst", burst(bytesPerSecond));
        // The bridge address (JobManager, REST, the benchmark) is not part of the shaped network.
        tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:" + DEFAULT_CLASS, "htb", "rate",
                String.valueOf(UNLIMITED_BITS), "burst", burst(UNLIMITED_BITS / 8));
        for (int from = 1; from <= hosts; from++) {
            if (from != to) {
                shapeLink(from, to, bytesPerSecond);
            }
        }
    }

    private static String bits(long bytesPerSecond) {
        if (bytesPerSecond < 1_000) {
            throw new IllegalArgumentException("A shaped rate must be at least 1 kB/s, was " + bytesPerSecond + " B/s");
        }
        return (bytesPerSecond * 8) + "bit";
    }

    /** Bytes the class may send at once: 5 ms of its rate, at least 64 KiB (one GSO segment). */
    private static String burst(long bytesPerSecond) {
        return Math.max(64 * 1024, bytesPerSecond / 200) + "b";
    }

    private String namespace(int i) {
        return "sr3-" + tag + "-" + i;
    }

    private String outside(int i) {
        return "sr3h" + tag + "x" + i;
    }

    private void checkHost(int i) {
        if (i < 1 || i > hosts) {
            throw new IllegalArgumentException("No host " + i + " in a network of " + hosts);
        }
    }

    /** Deletes every namespace, veth and the bridge this network created. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        removeQuietly();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs or ran
        }
    }

    private synchronized void removeQuietly() {
        for (int i = created.size() - 1; i >= 0; i--) {
            String[] what = created.get(i).split(":", 2);
            try {
                run(what[0].equals("netns") ? List.of("ip", "netns", "del", what[1]) : List.of("ip", "link", "del", what[1]),
                        true);
            } catch (IOException e) {
                System.err.println("Could not remove " + created.get(i) + ": " + e.getMessage());
            }
        }
        created.clear();
    }

    // ------------------------------------------------------------------ commands

    private void ip(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("ip"));
        command.addAll(List.of(args));
        run(command);
    }

    private void tc(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("tc"));
        command.addAll(List.of(args));
        run(command);
    }

    private void inNamespace(int i, String... args) throws IOException {
        List<String> command = new ArrayList<>(commandPrefix(i));
        command.addAll(List.of(args));
        run(command);
    }

    /** A /24 in 10.213.0.0/16 that no interface of this namespace has an address in. */
    private static String freeSubnet() throws IOException {
        String addresses = run(List.of("ip", "-4", "-o", "addr"));
        long pid = ProcessHandle.current().pid();
        for (int attempt = 0; attempt < 250; attempt++) {
            String candidate = "10.213." + (1 + (pid + attempt) % 250);
            if (!addresses.contains(" " + candidate + ".")) {
                return candidate;
            }
        }
        throw new IOException("No free /24 in 10.213.0.0/16: " + addresses);
    }

    private static String run(List<String> command) throws IOException {
        return run(command, false);
    }

    private static String run(List<String> command, boolean mayFail) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not return within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("Interrupted running " + String.join(" ", command), e);
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.exitValue() != 0 && !mayFail) {
            throw new IOException(String.format(Locale.ROOT, "'%s' exited with %d: %s", String.join(" ", command),
                    process.exitValue(), output.trim()));
        }
        return output;
    }
}
