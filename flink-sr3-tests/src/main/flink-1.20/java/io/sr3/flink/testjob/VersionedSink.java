package io.sr3.flink.testjob;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * Flink 1.20 side of the test job's version seam: 1.20 still declares the deprecated
 * {@code createWriter(Sink.InitContext)} abstract, though its runtime only calls
 * {@code createWriter(WriterInitContext)} (the one the sinks implement; Flink 2.0 removed the
 * other).
 */
abstract class VersionedSink<T> implements Sink<T> {

    private static final long serialVersionUID = 1L;

    @Override
    @Deprecated
    public final SinkWriter<T> createWriter(InitContext context) {
        throw new UnsupportedOperationException(getClass().getSimpleName()
                + ": Flink 1.20 creates sink writers through createWriter(WriterInitContext)");
    }
}
