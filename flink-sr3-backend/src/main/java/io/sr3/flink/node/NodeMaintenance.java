package io.sr3.flink.node;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The background upkeep of one node, on its single maintenance thread: tasks that may block on
 * ring I/O (replica repair, the orphan sweep, the block scrubber) and so never share a thread with
 * requests or the failure detector, and never run concurrently with each other.
 */
@ThreadSafe
final class NodeMaintenance {

    private static final Logger LOG = LoggerFactory.getLogger(NodeMaintenance.class);

    private final String nodeId;
    private final ScheduledExecutorService thread;
    private final BooleanSupplier running;
    private final Set<String> scheduled = ConcurrentHashMap.newKeySet();

    NodeMaintenance(String nodeId, ScheduledExecutorService thread, BooleanSupplier running) {
        this.nodeId = nodeId;
        this.thread = thread;
        this.running = running;
    }

    /** See {@link RingNode#scheduleMaintenance}. */
    boolean schedule(String name, Supplier<Runnable> taskFactory, Duration interval) {
        if (!running.getAsBoolean() || !scheduled.add(name)) {
            return false;
        }
        Runnable task = taskFactory.get();
        thread.scheduleWithFixedDelay(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.warn("[{}] {} failed; will run again in {} ms", nodeId, name, interval.toMillis(), e);
            }
        }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return true;
    }
}
