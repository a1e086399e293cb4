package io.sr3.flink.node;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Three real ring nodes for a whole test class: {@code @RegisterExtension static
 * TestingRingExtension ring = new TestingRingExtension();}. An optional check runs against the
 * ring before it stops (for example: the suite really went through it).
 */
public final class TestingRingExtension implements BeforeAllCallback, AfterAllCallback {

    private final Consumer<TestingRing> finalCheck;
    private TestingRing ring;
    private Path root;

    public TestingRingExtension() {
        this(ring -> {});
    }

    public TestingRingExtension(Consumer<TestingRing> finalCheck) {
        this.finalCheck = finalCheck;
    }

    public TestingRing ring() {
        return ring;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        root = Files.createTempDirectory("sr3-ring-");
        ring = TestingRing.start(3, TestingRing.testConfig(), root);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try {
            finalCheck.accept(ring);
        } finally {
            ring.close();
            org.apache.flink.util.FileUtils.deleteDirectory(root.toFile());
        }
    }
}
