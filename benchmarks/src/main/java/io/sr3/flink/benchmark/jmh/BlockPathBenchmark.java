package io.sr3.flink.benchmark.jmh;

import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.transport.Crc32c;
import io.sr3.flink.transport.TransportLimits;
import io.sr3.flink.transport.TransportSecurity;
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

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.LocalDate;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The block path one block at a time, in the style of flink-benchmarks: the store's put and read,
 * and a put and a verified read between two ring nodes over a real loopback connection. Each
 * case runs with the baseline and the candidate as one {@code @Param path}: {@code baseline}
 * computes the checksum again where the block is stored or read, as every layer did before;
 * {@code candidate} reuses the one computed where the block was filled, or by the store or the
 * frame decoder as the bytes went by. {@code sequentialRead} reads a file of
 * {@value #FILE_BLOCKS} blocks from another ring node block by block and writes each to a local
 * file, as a download through an {@code sr3://} stream does: {@code baseline} asks for the next
 * block once the current one is written, {@code candidate} has it on its way meanwhile (the
 * stream's read-ahead).
 *
 * <p>Run: {@code mvn -pl benchmarks exec:exec@block-path-benchmark} (results in
 * {@code benchmarks/results/block-path-<date>.json}, plotted in {@code .svg}); add {@code -Dsr3.jmh.smoke=true} to run
 * every case once, {@code -Dsr3.jmh.include=sequentialRead} for the cases of one method (a regex).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class BlockPathBenchmark {

    @Param({"65536", "4194304"})
    public int blockBytes;

    @Param({"baseline", "candidate"})
    public String path;

    private Path directory;
    private BlockStore store;
    private RingNode writer;
    private RingNode holder;
    private byte[] block;
    private int crc;
    private long sequence;
    private FileChannel download;

    static final int FILE_BLOCKS = 8;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        directory = Files.createTempDirectory(Paths.get(System.getProperty("java.io.tmpdir")), "sr3-jmh");
        store = new BlockStore(directory.resolve("store"), false);
        NodeConfig base = NodeConfig.defaults().withTransport(new TransportSecurity(null, null, true),
                TransportLimits.defaults());
        writer = RingNode.start(base.withPortAndStore(0, directory.resolve("writer")));
        holder = RingNode.start(base.withPortAndStore(0, directory.resolve("holder")));
        block = new byte[blockBytes];
        new Random(blockBytes).nextBytes(block);
        crc = Crc32c.of(block);
        store.put("b-read", block);
        holder.store().put("b-read", block);
        writer.put(holder.self(), "b-warm-up", block).get(); // the connection exists before the first measurement
        for (int i = 0; i < FILE_BLOCKS; i++) {
            holder.store().put("f-" + i, block);
        }
        download = FileChannel.open(directory.resolve("download"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        writer.close();
        holder.close();
        download.close();
        try (var paths = Files.walk(directory)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** Keys cycle over a few names so the store's directory does not grow without bound. */
    private String nextKey() {
        return "b-" + (sequence++ % 64);
    }

    private boolean candidate() {
        return path.equals("candidate");
    }

    @Benchmark
    public void storePut() throws IOException {
        if (candidate()) {
            store.put(nextKey(), block, crc);
        } else {
            store.put(nextKey(), block);
        }
    }

    @Benchmark
    public byte[] storeVerifiedRead() throws IOException {
        if (candidate()) {
            return store.get("b-read", block.length, crc);
        }
        return checked(store.get("b-read"));
    }

    @Benchmark
    public void loopbackPut() throws Exception {
        if (candidate()) {
            writer.put(holder.self(), nextKey(), block, crc).get();
        } else {
            writer.put(holder.self(), nextKey(), block).get();
        }
    }

    @Benchmark
    public byte[] loopbackVerifiedRead() throws Exception {
        if (candidate()) {
            return writer.getVerified(holder.self(), "b-read", block.length, crc).get();
        }
        return checked(writer.get(holder.self(), "b-read").get());
    }

    @Benchmark
    public long sequentialRead() throws IOException {
        RingStorage storage = writer.storage();
        List<Member> holders = List.of(holder.self());
        long written = 0;
        CompletableFuture<byte[]> next = candidate() ? storage.startRead("f-0", block.length, crc, holders) : null;
        for (int i = 0; i < FILE_BLOCKS; i++) {
            byte[] data;
            if (candidate()) {
                data = storage.finishRead(next, "f-" + i, block.length, crc, holders, "block " + i);
                next = i + 1 < FILE_BLOCKS ? storage.startRead("f-" + (i + 1), block.length, crc, holders) : null;
            } else {
                data = storage.readVerified("f-" + i, block.length, crc, holders, "block " + i);
            }
            written += download.write(ByteBuffer.wrap(data), (long) i * block.length);
        }
        return written;
    }

    private byte[] checked(byte[] data) {
        if (data.length != block.length || Crc32c.of(data) != crc) {
            throw new IllegalStateException("b-read came back altered");
        }
        return data;
    }

    public static void main(String[] args) throws Exception {
        Path results = Paths.get(args.length > 0 ? args[0] : "benchmarks/results");
        Files.createDirectories(results);
        Files.createDirectories(Paths.get(System.getProperty("java.io.tmpdir"))); // JMH keeps its lock file there
        boolean smoke = Boolean.getBoolean("sr3.jmh.smoke");
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(BlockPathBenchmark.class.getName() + "." + System.getProperty("sr3.jmh.include", ""))
                .jvmArgsAppend("-Xmx2g", "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        Path json = results.resolve("block-path-" + LocalDate.now() + ".json");
        if (smoke) {
            options.warmupIterations(0).measurementIterations(1).measurementTime(
                    org.openjdk.jmh.runner.options.TimeValue.milliseconds(200)).forks(0);
        } else {
            options.resultFormat(ResultFormatType.JSON).result(json.toString());
        }
        new Runner(options.build()).run();
        if (!smoke) {
            ResultPlots.write(json, System.err); // the SVG next to the JSON
        }
    }
}
