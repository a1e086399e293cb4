package io.sr3.flink.transport;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * Drives one decoder with a bounded stream of {@link Mutator} inputs and fails on anything but a
 * decoded value or the decoder's typed error: another exception (a NullPointerException, a
 * BufferUnderflowException, ...), an {@link OutOfMemoryError}, an input that does not return
 * within {@link #hangAfter}, or one that allocates far more than its own size (a count read from
 * the wire that sized an allocation before it was checked).
 *
 * <p>Every target draws its inputs from {@code new Random(seed + target.hashCode())}, so a
 * failure replays with {@code -Dsr3.fuzz.seed=<the printed seed>}; it is also reported with the
 * input in hex. Each run prints one line, prefixed {@code [fuzz]}, with the inputs it tried.
 */
@NotThreadSafe
public final class Fuzzer {

    /** The system property that fixes the seed, to replay a failure. */
    public static final String SEED_PROPERTY = "sr3.fuzz.seed";

    /** The system properties that change the default budget of a target (20,000 inputs, 5 s), for longer runs. */
    public static final String INPUTS_PROPERTY = "sr3.fuzz.inputs";
    public static final String SECONDS_PROPERTY = "sr3.fuzz.seconds";

    /** The seed of every target in this JVM: the property, or a fresh one printed once. */
    public static final long SEED = initialSeed();

    /** An exception's stack trace and message cost this much; a list sized by a hostile count, megabytes. */
    private static final long ALLOCATION_SLACK = 256 * 1024;
    /** Bytes a decoder may allocate per input byte: a copy, a String (UTF-16 at worst) and a char buffer. */
    private static final int ALLOCATION_PER_BYTE = 16;
    private static final int MAX_REPORTED_FAILURES = 5;
    private static final long WATCH_INTERVAL_MILLIS = 20;

    /** A decoder under test: it returns (decoded) or throws (refused or failed, see {@link #refusesWith}). */
    @FunctionalInterface
    public interface Decoder {
        void decode(byte[] input) throws Exception;
    }

    /**
     * What one run did.
     *
     * @param inputs inputs tried, the valid encodings included
     * @param decoded inputs the decoder accepted
     * @param refused inputs it refused with its typed error
     * @param maxAllocatedBytes the most one input allocated
     */
    public record Result(String target, long seed, int inputs, int decoded, int refused, Duration elapsed,
            long maxAllocatedBytes) {

        public String line() {
            return String.format("[fuzz] %s: %d inputs in %d ms (%d decoded, %d refused, at most %d bytes allocated by "
                    + "one input), seed %d", target, inputs, elapsed.toMillis(), decoded, refused, maxAllocatedBytes, seed);
        }
    }

    private final String target;
    private final Mutator mutator;
    private List<byte[]> valid = List.of();
    private Predicate<Throwable> typedError = e -> false;
    private int maxInputs = Integer.getInteger(INPUTS_PROPERTY, 20_000);
    private Duration maxTime = Duration.ofSeconds(Integer.getInteger(SECONDS_PROPERTY, 5));
    private Duration hangAfter = Duration.ofSeconds(10);

    public Fuzzer(String target) {
        this.target = target;
        this.mutator = new Mutator(new Random(SEED + target.hashCode()));
    }

    /** Valid encodings: each must decode, and most inputs are mutations of them. */
    public Fuzzer valid(List<byte[]> encodings) {
        this.valid = List.copyOf(encodings);
        return this;
    }

    /** The errors that count as a clean refusal. */
    public Fuzzer refusesWith(Predicate<Throwable> error) {
        this.typedError = error;
        return this;
    }

    /** Refusal by any exception of {@code type} (subclasses included). */
    public Fuzzer refusesWith(Class<? extends Throwable> type) {
        return refusesWith(type::isInstance);
    }

    /** At most {@code inputs} inputs or {@code time}, whichever ends first. */
    public Fuzzer budget(int inputs, Duration time) {
        this.maxInputs = inputs;
        this.maxTime = time;
        return this;
    }

    /** How long one input may run before it counts as a hang. */
    public Fuzzer hangAfter(Duration limit) {
        this.hangAfter = limit;
        return this;
    }

    /**
     * Runs the valid encodings, then fuzz inputs until the budget ends, on a worker thread watched
     * for hangs; prints the {@link Result} line.
     *
     * @throws AssertionError naming the seed and each failing input in hex, if any input failed
     */
    public Result run(Decoder decoder) throws InterruptedException {
        Worker worker = new Worker(decoder);
        Thread thread = new Thread(worker, "fuzz-" + target);
        thread.setDaemon(true);
        thread.start();
        while (thread.isAlive()) {
            thread.join(WATCH_INTERVAL_MILLIS);
            long started = worker.inputStartedNanos;
            if (started != 0 && System.nanoTime() - started > hangAfter.toNanos() && thread.isAlive()) {
                byte[] input = worker.current;
                thread.interrupt();
                throw new AssertionError(String.format("[fuzz] %s: an input of %d bytes did not return within %s "
                        + "(seed %d, input #%d): %s", target, input.length, hangAfter, SEED, worker.inputs,
                        Mutator.hex(input)));
            }
        }
        if (worker.crash.get() != null) {
            throw new AssertionError("[fuzz] " + target + ": the fuzzer itself failed, seed " + SEED, worker.crash.get());
        }
        Result result = new Result(target, SEED, worker.inputs, worker.decoded, worker.refused,
                Duration.ofNanos(worker.elapsedNanos), worker.maxAllocated);
        System.out.println(result.line());
        if (!worker.failures.isEmpty()) {
            throw new AssertionError(String.format("[fuzz] %s: %d failing input(s) (first %d shown), replay with -D%s=%d%n%s",
                    target, worker.failureCount, worker.failures.size(), SEED_PROPERTY, SEED,
                    String.join("\n", worker.failures)), worker.firstFailure);
        }
        return result;
    }

    /** What one input did. */
    private enum Outcome {
        DECODED,
        REFUSED,
        FAILED
    }

    /** Runs the inputs; its fields are read by the watching thread. */
    private final class Worker implements Runnable {
        private final Decoder decoder;
        private final List<String> failures = new ArrayList<>();
        private final AtomicReference<Throwable> crash = new AtomicReference<>();
        @Nullable private Throwable firstFailure;
        private volatile byte[] current = new byte[0];
        private volatile long inputStartedNanos;
        private volatile int inputs;
        private int decoded;
        private int refused;
        /** The refusal or failure of the last input. */
        @Nullable private Throwable lastError;
        private int failureCount;
        private long maxAllocated;
        private long elapsedNanos;

        Worker(Decoder decoder) {
            this.decoder = decoder;
        }

        @Override
        public void run() {
            try {
                long start = System.nanoTime();
                for (byte[] encoding : valid) {
                    if (attempt(encoding) != Outcome.DECODED) {
                        fail("a VALID encoding was not decoded: " + lastError, encoding, lastError);
                    }
                }
                long deadline = start + maxTime.toNanos();
                while (inputs < maxInputs && System.nanoTime() < deadline && failures.size() < MAX_REPORTED_FAILURES
                        && !Thread.currentThread().isInterrupted()) {
                    byte[] input = mutator.next(valid);
                    long before = allocatedBytes();
                    Outcome outcome = attempt(input);
                    long allocated = allocatedBytes() - before;
                    if (outcome == Outcome.FAILED) {
                        fail(String.valueOf(lastError), input, lastError);
                    } else if (allocated > allocationBound(input)) {
                        // Once more: the first run may have loaded classes or linked a call site (a Formatter, a concat).
                        before = allocatedBytes();
                        decodeQuietly(input);
                        allocated = allocatedBytes() - before;
                        if (allocated > allocationBound(input)) {
                            fail("allocated " + allocated + " bytes (bound " + allocationBound(input) + ")", input, null);
                        }
                    }
                    maxAllocated = Math.max(maxAllocated, allocated);
                }
                elapsedNanos = System.nanoTime() - start;
            } catch (Throwable t) {
                crash.set(t);
            }
        }

        /** Runs and counts one input. */
        private Outcome attempt(byte[] input) {
            inputs++;
            current = input;
            inputStartedNanos = System.nanoTime();
            try {
                decoder.decode(input);
                decoded++;
                return Outcome.DECODED;
            } catch (Throwable t) {
                lastError = t;
                if (typedError.test(t)) {
                    refused++;
                    return Outcome.REFUSED;
                }
                return Outcome.FAILED;
            } finally {
                inputStartedNanos = 0;
            }
        }

        /** Runs an input again, uncounted, to measure it once more. */
        private void decodeQuietly(byte[] input) {
            inputStartedNanos = System.nanoTime();
            try {
                decoder.decode(input);
            } catch (Throwable ignored) {
                // counted by the first run
            } finally {
                inputStartedNanos = 0;
            }
        }

        private void fail(String what, byte[] input, @Nullable Throwable error) {
            failureCount++;
            if (firstFailure == null) {
                firstFailure = error;
            }
            if (failures.size() < MAX_REPORTED_FAILURES) {
                failures.add(String.format("  input #%d, %d bytes: %s%n    hex: %s", inputs, input.length, what,
                        Mutator.hex(input)));
            }
        }
    }

    private static long allocationBound(byte[] input) {
        return ALLOCATION_SLACK + (long) ALLOCATION_PER_BYTE * input.length;
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private static long initialSeed() {
        String fixed = System.getProperty(SEED_PROPERTY);
        long seed = fixed == null || fixed.isBlank() ? new Random().nextLong() : Long.parseLong(fixed.trim());
        System.out.printf("[fuzz] seed %d (%s; replay with -D%s=%d)%n", seed, fixed == null ? "random" : "from " + SEED_PROPERTY,
                SEED_PROPERTY, seed);
        return seed;
    }
}
