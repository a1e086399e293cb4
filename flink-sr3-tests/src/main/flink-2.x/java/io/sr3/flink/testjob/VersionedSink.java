package io.sr3.flink.testjob;

import org.apache.flink.api.connector.sink2.Sink;

/**
 * Flink 2.x side of the test job's version seam: a {@link Sink} implements only
 * {@code createWriter(WriterInitContext)}, so nothing is added here.
 */
abstract class VersionedSink<T> implements Sink<T> {

    private static final long serialVersionUID = 1L;
}
