package io.sr3.flink.testjob;

import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * Delivers every {@link KeyResult} to {@link RunRegistry} in this JVM (MiniCluster only). Not
 * transactional on purpose: a result emitted twice shows up in {@link RunRegistry.Run#emissions()}.
 */
public final class RegistrySink extends VersionedSink<KeyResult> {

    private static final long serialVersionUID = 1L;

    private final String runId;

    public RegistrySink(String runId) {
        this.runId = runId;
    }

    @Override
    public SinkWriter<KeyResult> createWriter(WriterInitContext context) {
        RunRegistry.Run run = RunRegistry.run(runId);
        return new SinkWriter<>() {
            @Override
            public void write(KeyResult result, Context ctx) {
                run.recordResult(result);
            }

            @Override
            public void flush(boolean endOfInput) {}

            @Override
            public void close() {}
        };
    }
}
