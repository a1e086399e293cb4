package io.sr3.flink.tools;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.AbstractChannelStateHandle;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.OperatorStreamStateHandle;
import org.apache.flink.runtime.state.StateObject;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The files a checkpoint consists of: its {@code _metadata} and every file its state handles
 * name, found by walking the handles Flink itself deserializes (RocksDB's shared files live
 * outside the {@code chk-N} directory).
 *
 * @param metadata the {@code _metadata} file
 * @param files every file a state handle names, with the size the handle records
 * @param unwalked handles of types this walk does not know, which may name further files
 */
record CheckpointFiles(Path metadata, Map<Path, Long> files, List<String> unwalked) {

    static final String METADATA = "_metadata";

    CheckpointFiles {
        files = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(files));
        unwalked = List.copyOf(unwalked);
    }

    /** {@code scheme://authority/a/b} for every spelling of a path ({@code sr3:/a/b}, {@code sr3:///a/b/}), so paths compare. */
    static Path normalized(Path path) {
        java.net.URI uri = path.toUri();
        String p = uri.getPath() == null || uri.getPath().isEmpty() ? "/" : uri.getPath().replaceAll("/+", "/");
        if (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        String scheme = uri.getScheme() == null ? "file" : uri.getScheme();
        String authority = uri.getAuthority() == null ? "" : uri.getAuthority();
        return new Path(scheme + "://" + authority + p);
    }

    /** The {@code _metadata} file of {@code path} if it is a checkpoint (that file, or a directory holding it), else null. */
    static Path metadataOf(FileSystem fs, Path path) throws IOException {
        if (path.getName().equals(METADATA)) {
            return path;
        }
        Path metadata = new Path(path, METADATA);
        return fs.getFileStatus(path).isDir() && fs.exists(metadata) ? metadata : null;
    }

    /**
     * Reads a checkpoint's metadata (every block verified on the way) and lists its files.
     *
     * @throws IOException if the metadata cannot be read or is no checkpoint metadata
     */
    static CheckpointFiles read(FileSystem fs, Path metadata) throws IOException {
        CheckpointMetadata parsed;
        try (FSDataInputStream in = fs.open(metadata)) {
            parsed = Checkpoints.loadCheckpointMetadata(new DataInputStream(in), CheckpointFiles.class.getClassLoader(),
                    metadata.getParent().toString());
        }
        Map<Path, Long> files = new LinkedHashMap<>();
        List<String> unwalked = new ArrayList<>();
        for (OperatorState operator : parsed.getOperatorStates()) {
            for (OperatorSubtaskState subtask : operator.getStates()) {
                List<StateObject> handles = new ArrayList<>();
                handles.addAll(subtask.getManagedKeyedState());
                handles.addAll(subtask.getRawKeyedState());
                handles.addAll(subtask.getManagedOperatorState());
                handles.addAll(subtask.getRawOperatorState());
                handles.addAll(ChannelStates.of(subtask));
                for (StateObject handle : handles) {
                    collect(handle, files, unwalked);
                }
            }
        }
        return new CheckpointFiles(metadata, files, unwalked);
    }

    private static void collect(StateObject handle, Map<Path, Long> files, List<String> unwalked) {
        if (handle == null || handle instanceof ByteStreamStateHandle) {
            return; // inline in _metadata
        }
        if (handle instanceof FileStateHandle file) {
            files.put(normalized(file.getFilePath()), file.getStateSize());
        } else if (handle instanceof KeyGroupsStateHandle keyGroups) {
            collect(keyGroups.getDelegateStateHandle(), files, unwalked);
        } else if (handle instanceof IncrementalRemoteKeyedStateHandle incremental) {
            collect(incremental.getMetaDataStateHandle(), files, unwalked);
            for (HandleAndLocalPath shared : incremental.getSharedState()) {
                collect(shared.getHandle(), files, unwalked);
            }
            for (HandleAndLocalPath own : incremental.getPrivateState()) {
                collect(own.getHandle(), files, unwalked);
            }
        } else if (handle instanceof OperatorStreamStateHandle operator) {
            collect(operator.getDelegateStateHandle(), files, unwalked);
        } else if (handle instanceof AbstractChannelStateHandle<?> channel) {
            collect(channel.getDelegate(), files, unwalked);
        } else {
            unwalked.add(handle.getClass().getName());
        }
    }
}
