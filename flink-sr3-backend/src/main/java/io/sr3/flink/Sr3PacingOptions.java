package io.sr3.flink;

import io.sr3.flink.pacing.PacingSettings;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.HeartbeatManagerOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.RestOptions;

import javax.annotation.Nullable;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.List;

/**
 * The {@code sr3.pacing.*} options of the load-aware checkpoint pacer ({@link io.sr3.flink.pacing}),
 * and their validation into {@link PacingSettings}.
 *
 * <p>The pacer is off unless {@code sr3.pacing.enabled: true}; then
 * {@code sr3.pacing.max-recovery-time} is required and must be longer than the failure-detection
 * time. A bad value fails the job at start with a message naming the key and the value.
 */
public final class Sr3PacingOptions {

    private Sr3PacingOptions() {}

    public static final ConfigOption<Boolean> ENABLED =
            ConfigOptions.key("sr3.pacing.enabled")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("Run the load-aware checkpoint pacer for every job in the JobManager: it adds "
                            + "checkpoints (over the JobManager's REST API) so that the recovery time stays under "
                            + "sr3.pacing.max-recovery-time, at moments when the busiest subtasks have headroom. "
                            + "Flink's periodic checkpoints (execution.checkpointing.interval, which must be set) stay "
                            + "on as the safety maximum.");

    public static final ConfigOption<Duration> MAX_RECOVERY_TIME =
            ConfigOptions.key("sr3.pacing.max-recovery-time")
                    .durationType()
                    .noDefaultValue()
                    .withDescription("The recovery-time bound the pacer keeps: failure detection + restore + replay "
                            + "until caught up. Required with sr3.pacing.enabled; must be longer than "
                            + "sr3.pacing.failure-detection-time.");

    public static final ConfigOption<Duration> FAILURE_DETECTION_TIME =
            ConfigOptions.key("sr3.pacing.failure-detection-time")
                    .durationType()
                    .noDefaultValue()
                    .withDescription("Time from a failure until Flink restarts the job (detection plus restart "
                            + "delay), the D of the recovery-time model. Default: heartbeat.timeout, the time Flink "
                            + "needs to notice a TaskManager that hangs.");

    public static final ConfigOption<Duration> MTBF =
            ConfigOptions.key("sr3.pacing.mtbf")
                    .durationType()
                    .defaultValue(Duration.ofDays(1))
                    .withDescription("Expected mean time between failures; with the measured checkpoint duration C it "
                            + "gives Young's interval sqrt(2 * C * MTBF), which the pacer aims at while the bound "
                            + "allows it.");

    public static final ConfigOption<MemorySize> RESTORE_BANDWIDTH =
            ConfigOptions.key("sr3.pacing.restore-bandwidth")
                    .memoryType()
                    .defaultValue(MemorySize.parse("100mb"))
                    .withDescription("Bytes per second one subtask's restore reads, until the TaskManagers have "
                            + "measured one: the pacer estimates the restore time as the largest share of the last "
                            + "checkpoint that one subtask restores (subtasks restore in parallel) divided by the slowest "
                            + "restore rate a TaskManager achieved in the last hour, or by this value before any restore of "
                            + "at least 1 MiB.");

    public static final ConfigOption<Duration> PEAK_MEMORY =
            ConfigOptions.key("sr3.pacing.peak-memory")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(10))
                    .withDescription("How long the pacer remembers the highest input rate it measured. While the load is "
                            + "low, it keeps the checkpoint age under what a return of that peak would allow, so that "
                            + "the next burst finds a fresh checkpoint instead of forcing one at its busiest moment. "
                            + "Set it to about the time between your bursts, or longer. It is also how long the "
                            + "capacity measured while no checkpoint ran, and the rate of the last replay after a "
                            + "restart, count as the capacity a replay would have.");

    public static final ConfigOption<String> REST_URL =
            ConfigOptions.key("sr3.pacing.rest-url")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Base URL of the JobManager's REST API, which the pacer polls and triggers "
                            + "checkpoints through, and the cost-aware replication planner (sr3.replication.mode) "
                            + "polls. Default: http://<rest.address>:<rest.port>; set it when rest.bind-port is a "
                            + "range or 0.");

    /** The pacer decides at most this often (it polls several REST resources per round) ... */
    static final Duration MIN_DECISION_PERIOD = Duration.ofMillis(250);
    /** ... and at least this often, so that a burst is seen within a few seconds. */
    static final Duration MAX_DECISION_PERIOD = Duration.ofSeconds(5);

    /** All pacing options, in the order the README lists them. */
    public static List<ConfigOption<?>> all() {
        return List.of(ENABLED, MAX_RECOVERY_TIME, FAILURE_DETECTION_TIME, MTBF, RESTORE_BANDWIDTH, PEAK_MEMORY,
                REST_URL);
    }

    /**
     * The pacer's settings, or null when pacing is off.
     *
     * @throws IllegalConfigurationException naming the key and value of the first bad option
     */
    @Nullable
    public static PacingSettings settings(ReadableConfig config) {
        if (!get(config, ENABLED, "expected true or false")) {
            return null;
        }
        String interval = CheckpointingOptions.CHECKPOINTING_INTERVAL.key();
        if (config.getOptional(CheckpointingOptions.CHECKPOINTING_INTERVAL).isEmpty()) {
            // Without periodic checkpointing Flink never initializes the coordinator side that starts the pacer.
            throw new IllegalConfigurationException(String.format("'%s: true' needs '%s' (Flink's periodic "
                    + "checkpoints are the pacer's safety maximum, for example '%s: 1 min')", ENABLED.key(), interval,
                    interval));
        }
        Duration bound = get(config, MAX_RECOVERY_TIME, DURATION);
        if (bound == null) {
            throw new IllegalConfigurationException(String.format("Missing flink-sr3 option '%s': required with '%s: "
                    + "true' (for example '%s: 2 min')", MAX_RECOVERY_TIME.key(), ENABLED.key(), MAX_RECOVERY_TIME.key()));
        }
        boolean detectionSet = get(config, FAILURE_DETECTION_TIME, DURATION) != null;
        Duration detection = failureDetectionTime(config);
        Duration mtbf = get(config, MTBF, DURATION);
        Duration peakMemory = get(config, PEAK_MEMORY, DURATION);
        MemorySize bandwidth = get(config, RESTORE_BANDWIDTH, "expected a size like '100 mb'");
        for (ConfigOption<Duration> option : List.of(MAX_RECOVERY_TIME, FAILURE_DETECTION_TIME, MTBF, PEAK_MEMORY)) {
            Duration d = option == FAILURE_DETECTION_TIME ? detection : get(config, option, DURATION);
            check(NodeConfigReader.isPositive(d), option, config, "must be a positive duration");
        }
        check(bound.compareTo(detection) > 0, MAX_RECOVERY_TIME, config, String.format(
                "must be longer than the failure-detection time (%s = %s)", detectionSet ? FAILURE_DETECTION_TIME.key()
                        : HeartbeatManagerOptions.HEARTBEAT_TIMEOUT.key() + ", the default of " + FAILURE_DETECTION_TIME.key(),
                detection.toMillis() % 1000 == 0 ? detection.toSeconds() + " s" : detection.toMillis() + " ms"));
        check(bandwidth.getBytes() > 0, RESTORE_BANDWIDTH, config, "must be a positive size per second, like '100 mb'");
        String restUrl = restUrl(config);
        String scheme;
        try {
            scheme = new URI(restUrl).getScheme();
        } catch (URISyntaxException e) {
            scheme = null;
        }
        check("http".equals(scheme) || "https".equals(scheme), REST_URL, config, "expected an http:// or https:// URL");
        Duration fetch = config.get(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL);
        Duration half = fetch.dividedBy(2);
        Duration period = half.compareTo(MIN_DECISION_PERIOD) < 0 ? MIN_DECISION_PERIOD
                : half.compareTo(MAX_DECISION_PERIOD) > 0 ? MAX_DECISION_PERIOD : half;
        Duration staleAfter = fetch.multipliedBy(3).plus(period);
        staleAfter = staleAfter.compareTo(Duration.ofSeconds(5)) < 0 ? Duration.ofSeconds(5) : staleAfter;
        return new PacingSettings(bound, detection, mtbf, bandwidth.getBytes(), restUrl, period, staleAfter, peakMemory);
    }

    /** {@link #FAILURE_DETECTION_TIME}, or Flink's heartbeat timeout when unset. */
    static Duration failureDetectionTime(ReadableConfig config) {
        Duration configured = get(config, FAILURE_DETECTION_TIME, DURATION);
        return configured != null ? configured : config.get(HeartbeatManagerOptions.HEARTBEAT_TIMEOUT);
    }

    /** {@link #REST_URL}, or the JobManager's REST address and port when unset. */
    static String restUrl(ReadableConfig config) {
        return config.getOptional(REST_URL).orElseGet(() -> {
            String host = config.getOptional(RestOptions.ADDRESS)
                    .orElse(config.getOptional(JobManagerOptions.ADDRESS).orElse("localhost"));
            return "http://" + (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":"
                    + config.get(RestOptions.PORT);
        });
    }

    private static final String DURATION = "expected a duration like '30 s' or '2 min'";

    /** The option's value (its default when unset, null without one), or an error that names it. */
    @Nullable
    private static <T> T get(ReadableConfig config, ConfigOption<T> option, String expected) {
        try {
            return config.getOptional(option).orElse(option.hasDefaultValue() ? option.defaultValue() : null);
        } catch (IllegalArgumentException e) {
            check(false, option, config, expected);
            return null;
        }
    }

    private static void check(boolean condition, ConfigOption<?> option, ReadableConfig config, String rule) {
        NodeConfigReader.check(condition, option, config.toMap(), rule);
    }
}
