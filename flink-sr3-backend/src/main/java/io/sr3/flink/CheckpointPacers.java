package io.sr3.flink;

import io.sr3.flink.pacing.CheckpointPacer;
import io.sr3.flink.pacing.PacingSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The running pacers of this JobManager process, at most one per job, each on its own daemon
 * thread and published as the MBean {@code io.sr3.flink:type=CheckpointPacer,job=<job id>}.
 *
 * <p>Static on purpose, like {@link ReplicationPlanners}: Flink creates the checkpoint storage's
 * per-job access again for every new execution graph of the same job, and those instances cannot
 * reach each other otherwise. A pacer removes itself when it stops.
 */
@ThreadSafe
public final class CheckpointPacers {

    private static final Logger LOG = LoggerFactory.getLogger(CheckpointPacers.class);
    private static final Map<String, PacerMBean> RUNNING = new ConcurrentHashMap<>();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);

    private CheckpointPacers() {}

    /** Starts a REST-driven pacer for {@code jobId} unless one runs already. */
    public static void startIfAbsent(String jobId, PacingSettings settings) {
        RUNNING.computeIfAbsent(jobId, id -> {
            ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "sr3-checkpoint-pacer-" + id);
                t.setDaemon(true);
                return t;
            });
            ObjectName name = objectName(id);
            CheckpointPacer pacer = new CheckpointPacer(id, settings,
                    new RestJobEndpoint(URI.create(settings.restUrl()), id, REQUEST_TIMEOUT), Clock.systemUTC(), executor,
                    () -> {
                        RUNNING.remove(id);
                        unregister(name);
                    }, new RingPacerStatusPublisher(id), new RingRestoreRateSource());
            PacerMBean bean = new PacerMBean(pacer);
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            try {
                if (server.isRegistered(name)) {
                    server.unregisterMBean(name); // a pacer of the same job that did not stop cleanly
                }
                server.registerMBean(bean, name);
            } catch (JMException e) {
                LOG.warn("Could not publish the checkpoint pacer as MBean {}: {}", name, e.toString());
            }
            pacer.start();
            return bean;
        });
    }

    /** The running pacer of a job, if any (for tests and tools in the same process). */
    public static Optional<CheckpointPacerMXBean> running(String jobId) {
        return Optional.ofNullable(RUNNING.get(jobId));
    }

    /** The JMX name of a job's pacer. */
    public static ObjectName objectName(String jobId) {
        try {
            return new ObjectName("io.sr3.flink:type=CheckpointPacer,job=" + jobId);
        } catch (JMException e) {
            throw new IllegalArgumentException("Not a usable job id for JMX: " + jobId, e);
        }
    }

    private static void unregister(ObjectName name) {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
        } catch (JMException e) {
            LOG.debug("MBean {} was not registered: {}", name, e.toString());
        }
    }
}
