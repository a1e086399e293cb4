package io.sr3.flink;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.pacing.RestoreRateSource;
import io.sr3.flink.restore.RestoreRates;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.time.Duration;
import java.util.OptionalDouble;

/**
 * The restore rates the TaskManagers' ring nodes published ({@link RestoreRates}), read through
 * this process's ring node at most once per {@link #REFRESH}; a rate older than {@link #MAX_AGE}
 * no longer counts.
 */
@NotThreadSafe
final class RingRestoreRateSource implements RestoreRateSource {

    private static final Logger LOG = LoggerFactory.getLogger(RingRestoreRateSource.class);
    static final Duration REFRESH = Duration.ofSeconds(10);
    static final Duration MAX_AGE = Duration.ofHours(1);

    private long readAtNanos = Long.MIN_VALUE;
    private OptionalDouble cached = OptionalDouble.empty();

    @Override
    public OptionalDouble bytesPerSecond() {
        long now = System.nanoTime();
        if (readAtNanos == Long.MIN_VALUE || now - readAtNanos > REFRESH.toNanos()) {
            readAtNanos = now;
            try {
                java.util.Optional<RingNode> node = LocalRing.running();
                if (node.isPresent()) {
                    cached = RestoreRates.slowest(node.get(), MAX_AGE);
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("Could not read the measured restore rates from the ring: {}", e.toString());
            }
        }
        return cached;
    }
}
