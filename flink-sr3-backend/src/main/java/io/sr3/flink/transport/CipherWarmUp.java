package io.sr3.flink.transport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;
import javax.crypto.Cipher;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Seals and opens small frames under a throwaway key when an authenticated storage node starts, so
 * that the JIT compiles the JDK's AES-GCM with its AES and GHASH intrinsics before the first
 * checkpoint or restore needs it.
 *
 * <p>Why: the JDK's GHASH is plain Java until the code that calls it has been compiled, and a few
 * calls on large buffers (a 4 MiB frame is a few) do not make it hot. A fresh JVM on JDK 17 seals
 * and opens its first 30 or so MiB of 4 MiB frames at about 45 MB/s instead of more than 1 GB/s:
 * over a second of CPU, which would land on the first restore of a replacement TaskManager. TLS
 * records are AES-GCM too and gain about half as much. {@value #FRAMES} frames of {@value
 * #FRAME_BYTES} bytes cost about 0.4 s of one core once per process, on a background thread of the
 * lowest priority ({@code CipherWarmUpBenchmark} in {@code benchmarks/} measures both sides).
 */
@ThreadSafe
public final class CipherWarmUp {

    private static final Logger LOG = LoggerFactory.getLogger(CipherWarmUp.class);

    static final int FRAMES = 1000;
    static final int FRAME_BYTES = 16 * 1024;

    private static final AtomicBoolean STARTED = new AtomicBoolean();

    private CipherWarmUp() {}

    /** Starts the warm-up on a daemon thread, once per process; later calls do nothing. */
    public static void startOnce() {
        if (!STARTED.compareAndSet(false, true)) {
            return;
        }
        Thread thread = new Thread(() -> {
            try {
                Duration took = run();
                LOG.info("sr3 sealed frames: AES-GCM warmed up in {} ms ({} frames of {} KiB)", took.toMillis(), FRAMES,
                        FRAME_BYTES / 1024);
            } catch (RuntimeException | GeneralSecurityException e) {
                // The connections' own sealing reports a broken cipher; this only costs speed.
                LOG.warn("sr3 sealed frames: the AES-GCM warm-up failed; the first sealed transfers run slower", e);
            }
        }, "sr3-cipher-warm-up");
        thread.setDaemon(true);
        thread.setPriority(Thread.MIN_PRIORITY);
        thread.start();
    }

    /** Whether {@link #startOnce} was called in this process. */
    public static boolean started() {
        return STARTED.get();
    }

    /**
     * Seals {@value #FRAMES} frames as {@link FrameEncoder} does and opens each as {@link
     * FrameDecoder} does, in direct buffers like theirs, on the calling thread.
     *
     * @return how long it took
     * @throws GeneralSecurityException if a frame does not open to what was sealed
     */
    public static Duration run() throws GeneralSecurityException {
        long start = System.nanoTime();
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        FrameSeal sender = new FrameSeal(key);
        FrameSeal receiver = new FrameSeal(key);
        ByteBuffer header = ByteBuffer.allocate(Frame.HEADER_SIZE);
        byte[] bytes = new byte[FRAME_BYTES];
        new SecureRandom().nextBytes(bytes);
        int crc = Crc32c.of(bytes);
        ByteBuffer payload = ByteBuffer.allocateDirect(FRAME_BYTES).put(bytes).flip();
        ByteBuffer sealed = ByteBuffer.allocateDirect(FRAME_BYTES + FrameSeal.OVERHEAD);
        for (int frame = 0; frame < FRAMES; frame++) {
            sealed.clear();
            Cipher cipher = sender.sealNext(header);
            cipher.update(payload.duplicate(), sealed);
            cipher.doFinal(FrameSeal.crcBytes(crc), sealed);
            sealed.flip();
            if (receiver.openNext(header, sealed) != crc) {
                throw new GeneralSecurityException("a warm-up frame opened to another checksum than it was sealed with");
            }
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }
}
