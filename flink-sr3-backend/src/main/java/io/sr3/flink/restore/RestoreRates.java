package io.sr3.flink.restore;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.Payloads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The restore rate each storage node last achieved, shared through the ring so that the
 * JobManager's checkpoint pacer can use measured restore times instead of a configured bandwidth.
 * One small record per node, under {@code restore-rate-<host>-<port>}, overwritten by each restore
 * of at least {@link #MIN_BYTES}.
 */
public final class RestoreRates {

    private static final Logger LOG = LoggerFactory.getLogger(RestoreRates.class);

    /** Smaller restores are latency, not bandwidth. */
    public static final long MIN_BYTES = 1 << 20;

    private RestoreRates() {}

    static String key(Member node) {
        return "restore-rate-" + node.host() + "-" + node.port();
    }

    /** Publishes a finished restore's rate without waiting; a failure is only logged. */
    static void publish(RingNode node, RestoreReport report) {
        if (report.bytes() < MIN_BYTES || !(report.actualSeconds() > 0) || node.isClient()) {
            return;
        }
        Map<String, Long> values = new LinkedHashMap<>();
        values.put("bytes", report.bytes());
        values.put("actualMicros", Math.round(report.actualSeconds() * 1e6));
        values.put("atMillis", System.currentTimeMillis());
        node.storage().write(key(node.self()), Payloads.longMap(values), false).whenComplete((holders, error) -> {
            if (error != null) {
                LOG.debug("[{}] could not publish its restore rate: {}", node.self().id(), error.toString());
            }
        });
    }

    /**
     * The slowest rate, in bytes/s, that a live storage node published within {@code maxAge}: a
     * restore is as fast as its slowest TaskManager. Empty when none did.
     */
    public static OptionalDouble slowest(RingNode reader, Duration maxAge) throws IOException {
        long oldest = System.currentTimeMillis() - maxAge.toMillis();
        OptionalDouble slowest = OptionalDouble.empty();
        for (Member member : reader.membership().members()) {
            byte[] encoded = reader.storage().readAny(key(member), "restore rate of " + member.id());
            if (encoded == null) {
                continue;
            }
            Map<String, Long> values = Payloads.longMap(encoded);
            long bytes = values.getOrDefault("bytes", 0L);
            long micros = values.getOrDefault("actualMicros", 0L);
            if (values.getOrDefault("atMillis", 0L) < oldest || bytes <= 0 || micros <= 0) {
                continue;
            }
            double rate = bytes / (micros / 1e6);
            if (slowest.isEmpty() || rate < slowest.getAsDouble()) {
                slowest = OptionalDouble.of(rate);
            }
        }
        return slowest;
    }
}
