package io.sr3.flink;

import io.sr3.flink.fs.Sr3FileSystemFactory;
import io.sr3.flink.replication.ReplicationMode;
import io.sr3.flink.replication.ReplicationSettings;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStorageFactory;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;

import javax.annotation.Nullable;

import java.net.URI;

/**
 * {@code execution.checkpointing.storage: io.sr3.flink.Sr3CheckpointStorageFactory}.
 *
 * <p>Checkpoints go to {@code execution.checkpointing.dir} if it is an {@code sr3://} path, or to
 * {@value #DEFAULT_CHECKPOINT_DIRECTORY}; any other scheme there is a configuration error, because
 * it would silently send checkpoints somewhere else. The {@code sr3.pacing.*} options are validated
 * and captured as {@link io.sr3.flink.pacing.PacingSettings}; the pacer itself is started later,
 * on the JobManager only (see {@link Sr3CheckpointStorage}). Cheap and side-effect free, like
 * every factory Flink calls per task.
 */
public final class Sr3CheckpointStorageFactory implements CheckpointStorageFactory<Sr3CheckpointStorage> {

    public static final String DEFAULT_CHECKPOINT_DIRECTORY = "sr3:///flink-checkpoints";

    @Override
    public Sr3CheckpointStorage createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        Sr3Options.offerToLocalRing(config);
        String directory = config.getOptional(CheckpointingOptions.CHECKPOINTS_DIRECTORY).orElse(DEFAULT_CHECKPOINT_DIRECTORY);
        URI uri;
        try {
            uri = new Path(directory).toUri();
        } catch (IllegalArgumentException e) {
            throw new IllegalConfigurationException("Invalid value '" + directory + "' for '"
                    + CheckpointingOptions.CHECKPOINTS_DIRECTORY.key() + "': " + e.getMessage(), e);
        }
        if (!Sr3FileSystemFactory.SCHEME.equals(uri.getScheme())) {
            throw new IllegalConfigurationException(String.format(
                    "Invalid value '%s' for '%s': with execution.checkpointing.storage = %s checkpoints live on the "
                            + "sr3 ring, so the directory must be an sr3:// path (or unset for %s). Savepoints go to "
                            + "'%s'.",
                    directory, CheckpointingOptions.CHECKPOINTS_DIRECTORY.key(), Sr3CheckpointStorageFactory.class.getName(),
                    DEFAULT_CHECKPOINT_DIRECTORY, CheckpointingOptions.SAVEPOINT_DIRECTORY.key()));
        }
        // -1: take the inline threshold and write buffer size from the configuration.
        FileSystemCheckpointStorage files = new FileSystemCheckpointStorage(new Path(directory), -1, -1)
                .configure(config, classLoader);
        // Only captured here: the pacer and the replication planner start on the JobManager, from
        // the job's checkpoint coordinator.
        return new Sr3CheckpointStorage(files, Sr3PacingOptions.settings(config), replicationSetup(config));
    }

    /** The replication planner's setup with {@code sr3.replication.mode: cost-aware}, else null. */
    @Nullable
    static ReplicationSetup replicationSetup(ReadableConfig config) {
        int replicationFactor = config.get(Sr3Options.REPLICATION_FACTOR);
        // A quorum above the factor is refused, naming the option, by the ring node's own validation.
        int writeQuorum = Math.min(replicationFactor, config.getOptional(Sr3Options.MIN_REPLICAS).orElse(replicationFactor));
        ReplicationSettings settings = Sr3ReplicationOptions.settings(config, replicationFactor, writeQuorum);
        if (settings.mode() != ReplicationMode.COST_AWARE) {
            return null;
        }
        return new ReplicationSetup(settings, Sr3ReplicationOptions.interval(config), Sr3PacingOptions.restUrl(config),
                Sr3PacingOptions.failureDetectionTime(config), config.get(Sr3PacingOptions.RESTORE_BANDWIDTH).getBytes());
    }
}
