package io.sr3.flink.harness;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The shared entry point of the benchmarks: checks the one argument (the results directory),
 * prepares the temp directory, turns any failure into exit code 2, and exits even though Flink and
 * Netty leave non-daemon threads behind.
 */
public final class BenchmarkMain {

    /** One benchmark run: writes its results under {@code resultsDirectory}, returns the exit code. */
    @FunctionalInterface
    public interface Benchmark {
        int run(Path tmp, Path resultsDirectory) throws Exception;
    }

    private BenchmarkMain() {}

    public static void run(String name, String[] args, Benchmark benchmark) {
        if (args.length != 1) {
            System.err.println("Usage: " + name + " <results directory>");
            System.exit(2);
        }
        int code;
        try {
            Path tmp = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
            Files.createDirectories(tmp);
            code = benchmark.run(tmp, Path.of(args[0]));
        } catch (Throwable t) {
            System.out.println("BENCHMARK FAILED: " + t);
            t.printStackTrace(System.out);
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }
}
