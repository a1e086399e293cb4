package io.sr3.flink;

import io.sr3.flink.node.TestingRingExtension;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

/**
 * Flink's state backend contract ({@code StateBackendTestBase}) for flink-sr3 with RocksDB
 * working state, full and incremental, every state object written to {@code sr3://} on three real
 * ring nodes (inline threshold 0).
 */
@ExtendWith(ParameterizedTestExtension.class)
// AbstractStateBackend, not EmbeddedRocksDBStateBackend: its package differs between Flink 1.20 and 2.x.
class Sr3RocksDBStateBackendTest extends StateBackendTestBase<AbstractStateBackend> {

    @RegisterExtension
    static final TestingRingExtension RING = new TestingRingExtension(Sr3HeapStateBackendTest::assertSuiteUsedTheRing);

    @Parameter public boolean incremental;

    @Parameters(name = "incremental={0}")
    public static List<Boolean> modes() {
        return List.of(true, false);
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        Configuration config = new Configuration();
        config.set(Sr3Options.WORKING_STATE, WorkingState.ROCKSDB);
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        return new Sr3StateBackendFactory().createFromConfig(config, getClass().getClassLoader());
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return Sr3HeapStateBackendTest.sr3Storage();
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return false;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return true;
    }

    @Override
    protected boolean isSafeToReuseKVState() {
        return true;
    }
}
