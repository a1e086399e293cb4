package io.sr3.flink;

import io.sr3.flink.node.TestingRing;
import io.sr3.flink.node.TestingRingExtension;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.HashMapStateBackendTest;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink's state backend contract ({@code StateBackendTestBase}, through Flink's own heap test and
 * its exceptions) for flink-sr3 with heap working state, every state object written to
 * {@code sr3://} on three real ring nodes (inline threshold 0).
 */
class Sr3HeapStateBackendTest extends HashMapStateBackendTest {

    @RegisterExtension
    static final TestingRingExtension RING = new TestingRingExtension(Sr3HeapStateBackendTest::assertSuiteUsedTheRing);

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        Configuration config = new Configuration();
        config.set(Sr3Options.WORKING_STATE, WorkingState.HEAP);
        return new Sr3StateBackendFactory().createFromConfig(config, getClass().getClassLoader());
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return sr3Storage();
    }

    /** The suite must really have gone through the ring, not through some fallback. */
    static void assertSuiteUsedTheRing(TestingRing ring) {
        assertThat(ring.node(0).metrics().bytesWritten.get()).isPositive();
        assertThat(ring.node(0).metrics().bytesRead.get()).isPositive();
    }

    /** Checkpoint storage on a fresh sr3:// directory that inlines nothing into metadata. */
    static CheckpointStorage sr3Storage() {
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, "sr3:///state-backend-test/" + UUID.randomUUID());
        config.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        return new Sr3CheckpointStorageFactory().createFromConfig(config, Sr3HeapStateBackendTest.class.getClassLoader());
    }
}
