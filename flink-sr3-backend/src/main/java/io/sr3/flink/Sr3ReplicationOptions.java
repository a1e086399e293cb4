package io.sr3.flink;

import io.sr3.flink.replication.ReplicationMode;
import io.sr3.flink.replication.ReplicationSettings;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.List;

/**
 * The {@code sr3.replication.*} options of topology-aware replication ({@link io.sr3.flink.replication}),
 * and their validation into {@link ReplicationSettings}.
 *
 * <p>With the default {@code sr3.replication.mode: uniform} every file gets
 * {@code sr3.ring.replication-factor} copies, as before. A bad value fails at start with a message
 * naming the key and the value.
 */
public final class Sr3ReplicationOptions {

    private Sr3ReplicationOptions() {}

    /** Copies are limited like sr3.ring.replication-factor. */
    static final int MOST_COPIES = 16;

    public static final ConfigOption<ReplicationMode> MODE =
            ConfigOptions.key("sr3.replication.mode")
                    .enumType(ReplicationMode.class)
                    .defaultValue(ReplicationMode.UNIFORM)
                    .withDescription("How many copies each operator's checkpoint files get. 'uniform': "
                            + "sr3.ring.replication-factor for every file. 'cost-aware': the JobManager estimates "
                            + "what losing one subtask's state of each stateful operator would cost (restore, replay "
                            + "of its backlog, and the subtasks of its failover region that restart with it), and "
                            + "gives the costliest bytes more copies over more zones, within sr3.replication.budget "
                            + "and between sr3.replication.min-copies and sr3.replication.max-copies. New checkpoints "
                            + "follow the latest choice; existing files keep theirs.");

    public static final ConfigOption<Double> BUDGET =
            ConfigOptions.key("sr3.replication.budget")
                    .doubleType()
                    .noDefaultValue()
                    .withDescription("With 'cost-aware': the mean number of copies over all checkpoint bytes that the "
                            + "policy may spend, for example 2.3 to spend 15% more storage than a replication factor "
                            + "of 2. At least sr3.replication.min-copies. Default: sr3.ring.replication-factor, the "
                            + "storage of uniform replication.");

    public static final ConfigOption<Integer> MIN_COPIES =
            ConfigOptions.key("sr3.replication.min-copies")
                    .intType()
                    .noDefaultValue()
                    .withDescription("With 'cost-aware': the fewest copies of any operator's files. Between 1 and "
                            + "sr3.ring.replication-factor; a value below sr3.ring.min-replicas counts as "
                            + "sr3.ring.min-replicas, since every file needs its write quorum. Default: "
                            + "sr3.ring.min-replicas.");

    public static final ConfigOption<Integer> MAX_COPIES =
            ConfigOptions.key("sr3.replication.max-copies")
                    .intType()
                    .noDefaultValue()
                    .withDescription("With 'cost-aware': the most copies of any operator's files, never more than the "
                            + "ring has nodes. Between sr3.ring.replication-factor and " + MOST_COPIES + ". Default: "
                            + "sr3.ring.replication-factor + 1, so that the costliest state survives one more "
                            + "simultaneous node loss than uniform replication.");

    public static final ConfigOption<Duration> INTERVAL =
            ConfigOptions.key("sr3.replication.interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(30))
                    .withDescription("With 'cost-aware': how often the JobManager recomputes the choices from the "
                            + "job's metrics and its latest checkpoint.");

    /** All replication options, in the order the README lists them. */
    public static List<ConfigOption<?>> all() {
        return List.of(MODE, BUDGET, MIN_COPIES, MAX_COPIES, INTERVAL);
    }

    /**
     * The policy's settings for a ring of the given replication factor and write quorum (both
     * validated by {@link Sr3Options#nodeConfig}).
     *
     * @throws IllegalConfigurationException naming the key and value of the first bad option
     */
    public static ReplicationSettings settings(ReadableConfig config, int replicationFactor, int writeQuorum) {
        if (writeQuorum < 1 || writeQuorum > replicationFactor) {
            throw new IllegalArgumentException(String.format("Need 1 <= write quorum (%d) <= replication factor (%d)",
                    writeQuorum, replicationFactor));
        }
        ReplicationMode mode = get(config, MODE, "expected 'uniform' or 'cost-aware'");
        Integer setMin = optional(config, MIN_COPIES, "expected an integer");
        int configuredMin = setMin != null ? setMin : writeQuorum;
        check(configuredMin >= 1 && configuredMin <= replicationFactor, config, MIN_COPIES,
                "must be between 1 and sr3.ring.replication-factor (" + replicationFactor + ")");
        int min = Math.max(configuredMin, writeQuorum);
        Integer setMax = optional(config, MAX_COPIES, "expected an integer");
        int max = setMax != null ? setMax : Math.min(replicationFactor + 1, MOST_COPIES);
        check(max >= replicationFactor && max <= MOST_COPIES, config, MAX_COPIES,
                "must be between sr3.ring.replication-factor (" + replicationFactor + ") and " + MOST_COPIES);
        Double setBudget = optional(config, BUDGET, "expected a number like 2.5");
        double budget = setBudget != null ? setBudget : replicationFactor;
        check(Double.isFinite(budget) && budget >= min, config, BUDGET, "must be at least the minimum copies, " + min
                + " (sr3.replication.min-copies, never below sr3.ring.min-replicas)");
        interval(config);
        return new ReplicationSettings(mode, budget, min, max, replicationFactor);
    }

    /** How often the JobManager recomputes the plan, {@code sr3.replication.interval}. */
    public static Duration interval(ReadableConfig config) {
        Duration interval = get(config, INTERVAL, "expected a duration like '30 s' or '2 min'");
        check(!interval.isNegative() && !interval.isZero(), config, INTERVAL, "must be a positive duration");
        return interval;
    }

    private static <T> T get(ReadableConfig config, ConfigOption<T> option, String expected) {
        try {
            return config.get(option);
        } catch (IllegalArgumentException e) {
            throw invalid(config, option, expected);
        }
    }

    @Nullable
    private static <T> T optional(ReadableConfig config, ConfigOption<T> option, String expected) {
        return config.toMap().containsKey(option.key()) ? get(config, option, expected) : null;
    }

    private static void check(boolean condition, ReadableConfig config, ConfigOption<?> option, String rule) {
        if (!condition) {
            throw invalid(config, option, rule);
        }
    }

    private static IllegalConfigurationException invalid(ReadableConfig config, ConfigOption<?> option, String rule) {
        String value = config.toMap().getOrDefault(option.key(), "(default)");
        return new IllegalConfigurationException(String.format("Invalid value '%s' for flink-sr3 option '%s': %s",
                value, option.key(), rule));
    }
}
