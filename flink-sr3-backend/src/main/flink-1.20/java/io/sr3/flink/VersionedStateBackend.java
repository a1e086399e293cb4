package io.sr3.flink;

import org.apache.flink.runtime.state.AsyncKeyedStateBackend;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackend;

/**
 * Flink 1.20 side of the version seam: the parts of {@link StateBackend} whose signatures differ
 * between Flink lines, delegated to {@link Sr3StateBackend#delegate()}. Here
 * {@link AsyncKeyedStateBackend} is a raw type (it became generic in Flink 2.0).
 */
abstract class VersionedStateBackend implements ConfigurableStateBackend {

    private static final long serialVersionUID = 1L;

    /** The backend that holds the working state. */
    public abstract StateBackend delegate();

    @Override
    public <K> AsyncKeyedStateBackend createAsyncKeyedStateBackend(KeyedStateBackendParameters<K> parameters)
            throws Exception {
        return delegate().createAsyncKeyedStateBackend(parameters);
    }

    @Override
    public boolean supportsAsyncKeyedStateBackend() {
        return delegate().supportsAsyncKeyedStateBackend();
    }
}
