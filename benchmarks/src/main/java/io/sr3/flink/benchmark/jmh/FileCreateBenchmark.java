package io.sr3.flink.benchmark.jmh;

import io.sr3.flink.harness.ResultPlots;
import io.sr3.flink.node.TestingRing;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
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
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.IOException;
import java.nio.file.Files;
import java.time.LocalDate;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The fixed cost of a checkpoint file, as Flink's checkpoint streams pay it: create a new file
 * (NO_OVERWRITE, a unique name), write it, close it; and create a new directory, as the
 * JobManager does for every checkpoint. {@code target} is {@code file} (Flink's local file
 * system, the baseline) or {@code sr3-rf1}/{@code sr3-rf2}: the sr3:// file system of a
 * 3-node ring in this JVM over loopback, at replication factor 1 or 2. Average time per
 * operation on an idle machine; every round trip a create or close makes shows here.
 *
 * <p>Run: {@code mvn -pl benchmarks exec:exec@file-create-benchmark} (results in
 * {@code benchmarks/results/file-create-<date>.json}, plotted in {@code .svg}); {@code -Dsr3.jmh.smoke=true} runs every case once.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FileCreateBenchmark {

    @Param({"file", "sr3-rf1", "sr3-rf2"})
    public String target;

    @Param({"4096", "1048576"})
    public int fileBytes;

    private java.nio.file.Path directory;
    private TestingRing ring;
    private FileSystem fs;
    private Path base;
    private byte[] content;
    private long sequence;
    private Path created;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        directory = Files.createTempDirectory("file-create-bench");
        content = new byte[fileBytes];
        new Random(7).nextBytes(content);
        if (target.equals("file")) {
            base = new Path(directory.resolve("files").toUri());
        } else {
            Configuration config = new Configuration();
            config.setString("sr3.ring.replication-factor", target.substring("sr3-rf".length()));
            FileSystem.initialize(config, null);
            ring = TestingRing.start(config, 3, directory.resolve("ring"));
            base = new Path("sr3:///file-create-bench");
        }
        fs = base.getFileSystem();
        fs.mkdirs(base);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        if (ring != null) {
            ring.close();
        }
        org.apache.flink.util.FileUtils.deleteDirectory(directory.toFile());
    }

    /** Deletes the file or directory the last invocation created, outside the measured time, so the store stays small. */
    @TearDown(Level.Invocation)
    public void deleteCreated() throws IOException {
        if (created != null) {
            fs.delete(created, true);
            created = null;
        }
    }

    public static void main(String[] args) throws Exception {
        java.nio.file.Path results = java.nio.file.Paths.get(args.length > 0 ? args[0] : "benchmarks/results");
        Files.createDirectories(results);
        Files.createDirectories(java.nio.file.Paths.get(System.getProperty("java.io.tmpdir"))); // JMH's lock file
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(FileCreateBenchmark.class.getName() + "." + System.getProperty("sr3.jmh.include", ""))
                .jvmArgsAppend("-Xmx2g", "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        java.nio.file.Path json = results.resolve("file-create-" + LocalDate.now() + ".json");
        boolean smoke = Boolean.getBoolean("sr3.jmh.smoke");
        if (smoke) {
            options.warmupIterations(0).measurementIterations(1).measurementTime(TimeValue.milliseconds(200)).forks(0);
        } else {
            options.resultFormat(ResultFormatType.JSON).result(json.toString());
        }
        new Runner(options.build()).run();
        if (!smoke) {
            ResultPlots.write(json, System.err); // the SVG next to the JSON
        }
    }

    @Benchmark
    public Path createWriteClose() throws IOException {
        created = new Path(base, "f-" + sequence++);
        try (FSDataOutputStream out = fs.create(created, FileSystem.WriteMode.NO_OVERWRITE)) {
            out.write(content);
        }
        return created;
    }

    @Benchmark
    public Path mkdirsOfANewDirectory() throws IOException {
        created = new Path(base, "d-" + sequence++);
        fs.mkdirs(created);
        return created;
    }
}
