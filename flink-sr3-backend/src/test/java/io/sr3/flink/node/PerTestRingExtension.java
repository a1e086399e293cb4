package io.sr3.flink.node;

import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A ring that each test starts with its own size and configuration, stopped after the test and
 * its directory deleted: {@code @RegisterExtension final PerTestRingExtension rings = new
 * PerTestRingExtension();}, then {@code TestingRing ring = rings.start(3, TestingRing.testConfig());}
 * in the test. For one ring shared by a whole test class, see {@link TestingRingExtension}.
 */
public final class PerTestRingExtension implements AfterEachCallback {

    @Nullable private Path root;
    @Nullable private TestingRing ring;

    /** Starts {@code count} nodes in this test's directory, as {@link TestingRing#start} does. */
    public TestingRing start(int count, NodeConfig config) throws IOException {
        if (ring != null) {
            throw new IllegalStateException("This test started its ring already, with " + ring.nodes().size() + " nodes");
        }
        ring = TestingRing.start(count, config, root());
        return ring;
    }

    /** The ring this test started. */
    public TestingRing ring() {
        if (ring == null) {
            throw new IllegalStateException("This test has not started a ring yet: call start(count, config) first");
        }
        return ring;
    }

    /** This test's own directory, which holds the ring's stores; created on first use, deleted after the test. */
    public Path root() throws IOException {
        if (root == null) {
            root = Files.createTempDirectory("sr3-ring-");
        }
        return root;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        try {
            if (ring != null) {
                ring.close();
            }
        } finally {
            ring = null;
            if (root != null) {
                FileUtils.deleteDirectory(root.toFile());
                root = null;
            }
        }
    }
}
