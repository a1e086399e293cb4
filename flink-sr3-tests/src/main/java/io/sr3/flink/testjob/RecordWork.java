package io.sr3.flink.testjob;

import java.io.Serializable;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.locks.LockSupport;

/**
 * The fixed amount of work the keyed operator of {@link BurstyTestJob} does per record.
 *
 * <ul>
 *   <li>{@link Kind#BLOCKING}: a wait of {@code micros} wall time, like a synchronous lookup. Busy
 *       time and capacity ({@code 1e6 / micros} records/s per subtask) do not depend on how loaded
 *       the machine is, which keeps tests on a shared machine predictable.
 *   <li>{@link Kind#CPU}: {@code micros} of this thread's CPU time, like parsing or scoring. A
 *       checkpoint that needs CPU at the same moment (a full snapshot serialized and sent to the
 *       ring) slows processing down, as on a real TaskManager with as many slots as cores.
 * </ul>
 * {@code ballastBytesPerKey} adds state that the operator writes once per key (a profile, a model)
 * and never changes: it makes every full snapshot large without making records large.
 */
public record RecordWork(Kind kind, long micros, int ballastBytesPerKey) implements Serializable {

    private static final long serialVersionUID = 1L;

    /** What the operator spends per record. */
    public enum Kind {
        BLOCKING,
        CPU
    }

    public RecordWork {
        if (micros < 0 || ballastBytesPerKey < 0) {
            throw new IllegalArgumentException("micros and ballastBytesPerKey must be >= 0, were " + micros + " and "
                    + ballastBytesPerKey);
        }
    }

    public static RecordWork blocking(long micros) {
        return new RecordWork(Kind.BLOCKING, micros, 0);
    }

    public static RecordWork cpu(long micros) {
        return new RecordWork(Kind.CPU, micros, 0);
    }

    /** The same work, plus {@code bytes} of unchanging state per key. */
    public RecordWork withBallast(int bytes) {
        return new RecordWork(kind, micros, bytes);
    }

    /** Does the work for one record on the calling thread; returns a value the JIT cannot discard. */
    long perform() {
        long nanos = micros * 1000;
        return kind == Kind.CPU ? burnCpu(nanos) : block(nanos);
    }

    private static long block(long nanos) {
        long until = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = until - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
        return 0;
    }

    /** Spins until this thread has been on a CPU for {@code nanos}; time spent descheduled does not count. */
    private static long burnCpu(long nanos) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long until = threads.getCurrentThreadCpuTime() + nanos;
        long x = nanos;
        do {
            for (int i = 0; i < 2_000; i++) { // ~ a few microseconds between clock reads
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
        } while (threads.getCurrentThreadCpuTime() < until);
        return x;
    }
}
