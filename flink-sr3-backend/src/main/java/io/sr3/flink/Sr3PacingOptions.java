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

    /** The pacer decides at most this often (it polls several REST resources per round). */
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
        if (!get(config, ENABLED)) {
            return null;
        }
        if (config.getOptional(CheckpointingOptions.CHECKPOINTING_INTERVAL).isEmpty()) {
            // Without periodic checkpointing Flink never initializes the coordinator side that starts the pacer.
            throw new IllegalConfigurationException(String.format("'%s: true' needs '%s' (Flink's periodic "
                            + "checkpoints are the pacer's safety maximum, for example '%s: 1 min')", ENABLED.key(),
                    CheckpointingOptions.CHECKPOINTING_INTERVAL.key(), CheckpointingOptions.CHECKPOINTING_INTERVAL.key()));
        }
        Duration bound = optional(config, MAX_RECOVERY_TIME);
        if (bound == null) {
            throw new IllegalConfigurationException(String.format("Missing flink-sr3 option '%s': required with '%s: "
                    + "true' (for example '%s: 2 min')", MAX_RECOVERY_TIME.key(), ENABLED.key(), MAX_RECOVERY_TIME.key()));
        }
        check(isPositive(bound), config, MAX_RECOVERY_TIME, "must be a positive duration");
        Duration configuredDetection = optional(config, FAILURE_DETECTION_TIME);
        Duration detection = failureDetectionTime(config);
        check(isPositive(detection), config, FAILURE_DETECTION_TIME, "must be a positive duration");
        check(bound.compareTo(detection) > 0, config, MAX_RECOVERY_TIME, String.format(
                "must be longer than the failure-detection time (%s = %s)",
                configuredDetection != null ? FAILURE_DETECTION_TIME.key()
                        : HeartbeatManagerOptions.HEARTBEAT_TIMEOUT.key() + ", the default of " + FAILURE_DETECTION_TIME.key(),
                format(detection)));
        Duration mtbf = get(config, MTBF);
        check(isPositive(mtbf), config, MTBF, "must be a positive duration");
        Duration peakMemory = get(config, PEAK_MEMORY);
        check(isPositive(peakMemory), config, PEAK_MEMORY, "must be a positive duration");
        MemorySize bandwidth = get(config, RESTORE_BANDWIDTH);
        check(bandwidth.getBytes() > 0, config, RESTORE_BANDWIDTH, "must be a positive size per second, like '100 mb'");
        String restUrl = restUrl(config);
        try {
            URI uri = new URI(restUrl);
            check("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()), config, REST_URL,
                    "expected an http:// or https:// URL");
        } catch (URISyntaxException e) {
            throw invalid(config, REST_URL, "not a URL: " + e.getMessage());
        }
        Duration fetch = config.get(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL);
        Duration period = clamp(fetch.dividedBy(2), MIN_DECISION_PERIOD, MAX_DECISION_PERIOD);
        Duration staleAfter = max(Duration.ofSeconds(5), fetch.multipliedBy(3).plus(period));
        return new PacingSettings(bound, detection, mtbf, bandwidth.getBytes(), restUrl, period, staleAfter, peakMemory);
    }

    /** {@link #FAILURE_DETECTION_TIME}, or Flink's heartbeat timeout when unset. */
    static Duration failureDetectionTime(ReadableConfig config) {
        Duration configured = optional(config, FAILURE_DETECTION_TIME);
        return configured != null ? configured : config.get(HeartbeatManagerOptions.HEARTBEAT_TIMEOUT);
    }

    /** {@link #REST_URL}, or the JobManager's REST address and port when unset. */
    static String restUrl(ReadableConfig config) {
        return config.getOptional(REST_URL).orElseGet(() -> defaultRestUrl(config));
    }

    private static String defaultRestUrl(ReadableConfig config) {
        String host = config.getOptional(RestOptions.ADDRESS)
                .orElse(config.getOptional(JobManagerOptions.ADDRESS).orElse("localhost"));
        return "http://" + (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":"
                + config.get(RestOptions.PORT);
    }

    @Nullable
    private static Duration optional(ReadableConfig config, ConfigOption<Duration> option) {
        try {
            return config.getOptional(option).orElse(null);
        } catch (IllegalArgumentException e) {
            throw invalid(config, option, "expected a duration like '30 s' or '2 min'");
        }
    }

    private static <T> T get(ReadableConfig config, ConfigOption<T> option) {
        try {
            return config.get(option);
        } catch (IllegalArgumentException e) {
            throw invalid(config, option, option.key().endsWith("bandwidth") ? "expected a size like '100 mb'"
                    : option == ENABLED ? "expected true or false"
                    : "expected a duration like '30 s' or '2 min'");
        }
    }

    private static void check(boolean condition, ReadableConfig config, ConfigOption<?> option, String rule) {
        if (!condition) {
            throw invalid(config, option, rule);
        }
    }

    private static IllegalConfigurationException invalid(ReadableConfig config, ConfigOption<?> option, String rule) {
        String value = config.toMap().getOrDefault(option.key(), String.valueOf(option.defaultValue()));
        return new IllegalConfigurationException(String.format("Invalid value '%s' for flink-sr3 option '%s': %s",
                value, option.key(), rule));
    }

    private static boolean isPositive(@Nullable Duration d) {
        return d != null && !d.isZero() && !d.isNegative();
    }

    private static Duration clamp(Duration d, Duration min, Duration max) {
        return d.compareTo(min) < 0 ? min : d.compareTo(max) > 0 ? max : d;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private static String format(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
