package io.sr3.flink;

import io.sr3.flink.fs.Sr3FileSystemFactory;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.StateObject;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code sr3://} files a restoring subtask will read through input streams, found in the
 * state handles Flink gives the backend. Files RocksDB copies itself (the shared and private
 * files of incremental handles, restored by {@code copyFiles} on Flink 2.x and opened one by one
 * on Flink 1.20) and inline state are not listed.
 */
final class StateFiles {

    private StateFiles() {}

    static List<Path> readThroughStreams(Collection<? extends StateObject> handles) {
        Set<Path> files = new LinkedHashSet<>();
        for (StateObject handle : handles) {
            if (handle == null || handle instanceof IncrementalRemoteKeyedStateHandle) {
                continue;
            }
            StateObject file = handle;
            if (handle instanceof KeyGroupsStateHandle keyGroups) {
                file = keyGroups.getDelegateStateHandle();
            } else if (handle instanceof OperatorStateHandle operator) {
                file = operator.getDelegateStateHandle();
            }
            // FileStateHandle, not StreamStateHandle#maybeGetPath(): the same files, and Flink 1.20 lacks that method.
            if (file instanceof FileStateHandle stream
                    && Sr3FileSystemFactory.SCHEME.equals(stream.getFilePath().toUri().getScheme())) {
                files.add(stream.getFilePath());
            }
        }
        return new ArrayList<>(files);
    }
}
