package io.sr3.flink.benchmark.jmh;

import io.sr3.flink.shaded.io.netty.channel.EventLoopGroup;
import io.sr3.flink.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.sr3.flink.shaded.io.netty.channel.nio.NioIoHandler;
import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.tls.TestCertificates;
import io.sr3.flink.transport.BlockBuffers;
import io.sr3.flink.transport.CipherWarmUp;
import io.sr3.flink.transport.Crc32c;
import io.sr3.flink.transport.Frame;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.Payloads;
import io.sr3.flink.transport.TransportClient;
import io.sr3.flink.transport.TransportLimits;
import io.sr3.flink.transport.TransportSecurity;
import io.sr3.flink.transport.TransportServer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The first sealed transfer of a freshly started process: {@value #BLOCKS} blocks of 4 MiB put
 * from a client to a server over a real loopback connection authenticated with a shared secret
 * (every frame sealed with AES-GCM by the sender and opened by the receiver), once per fresh JVM
 * ({@code SingleShotTime}, every fork a new process, no JMH warm-up). {@code @Param warmUp}:
 * {@code none} is the baseline, the JIT meets AES-GCM first in these frames; {@code atStart} runs
 * {@link CipherWarmUp}, as a storage node does on its own thread when it starts, before the
 * transfer. The server discards the blocks, so the time is the transport's and the cipher's. The
 * transport is driven directly (its Netty is the backend jar's shaded copy), not through ring
 * nodes, which start the warm-up themselves.
 *
 * <p>Run: {@code mvn -pl benchmarks exec:exec@cipher-warm-up-benchmark} (results in
 * {@code benchmarks/results/cipher-warm-up-<date>.json}, plotted in {@code .svg}); add {@code
 * -Dsr3.jmh.smoke=true} to run each case once in this JVM.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(8)
public class CipherWarmUpBenchmark {

    static final int BLOCKS = 16;
    private static final int BLOCK_BYTES = 4 << 20;
    private static final int MAX_FRAME = BLOCK_BYTES + 1024;
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @Param({"none", "atStart"})
    public String warmUp;

    /** {@code secret}: sealed frames; {@code tls}: mutual TLS, whose records the JDK seals with AES-GCM too. */
    @Param({"secret", "tls"})
    public String security;

    private Path directory;

    private EventLoopGroup group;
    private ExecutorService io;
    private TransportServer server;
    private TransportClient client;
    private InetSocketAddress address;
    private ByteBuffer block;
    private int crc;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        io = Executors.newFixedThreadPool(2);
        directory = Files.createTempDirectory(Paths.get(System.getProperty("java.io.tmpdir")), "sr3-cipher-jmh");
        TransportSecurity secret = security.equals("secret") ? TransportSecurity.ofSecret("cipher-warm-up-benchmark")
                : tls(directory);
        server = TransportServer.start(group, "127.0.0.1", List.of(0).iterator(), secret, TransportLimits.defaults(),
                MAX_FRAME, (request, remote) -> new Frame(MessageType.OK, 0, new byte[0]), io,
                new BlockBuffers(MAX_FRAME, 4));
        client = new TransportClient(group, secret, MAX_FRAME, DEADLINE);
        address = server.address();
        client.request(address, MessageType.PING, new byte[0]).get(); // connected and authenticated
        byte[] bytes = new byte[BLOCK_BYTES];
        new Random(7).nextBytes(bytes);
        crc = Crc32c.of(bytes);
        block = ByteBuffer.allocateDirect(BLOCK_BYTES).put(bytes).flip();
        if (warmUp.equals("atStart")) {
            CipherWarmUp.run();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        client.close();
        server.close();
        io.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        try (var paths = Files.walk(directory)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static TransportSecurity tls(Path directory) throws java.io.IOException {
        TestCertificates ca = TestCertificates.newCa(directory.resolve("tls"), "bench-ca");
        return new TransportSecurity(ca.settings(ca.node("bench-node")), null, false);
    }

    /** Puts the blocks, two in flight, and waits for every answer. */
    @Benchmark
    public void firstSealedBlocks() throws Exception {
        List<CompletableFuture<Frame>> answers = new ArrayList<>();
        for (int i = 0; i < BLOCKS; i++) {
            if (i >= 2) {
                answers.get(i - 2).get();
            }
            answers.add(client.request(address, Payloads.putBlock("b-" + i, block.duplicate(), crc), DEADLINE));
        }
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get();
    }

    public static void main(String[] args) throws Exception {
        Path results = Paths.get(args.length > 0 ? args[0] : "benchmarks/results");
        Files.createDirectories(results);
        Files.createDirectories(Paths.get(System.getProperty("java.io.tmpdir"))); // JMH keeps its lock file there
        boolean smoke = Boolean.getBoolean("sr3.jmh.smoke");
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(CipherWarmUpBenchmark.class.getName())
                .jvmArgsAppend("-Xmx1g", "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        Path json = results.resolve("cipher-warm-up-" + LocalDate.now() + ".json");
        if (smoke) {
            options.forks(0);
        } else {
            options.resultFormat(ResultFormatType.JSON).result(json.toString());
        }
        new Runner(options.build()).run();
        if (!smoke) {
            ResultPlots.write(json, System.err); // the SVG next to the JSON
        }
    }
}
