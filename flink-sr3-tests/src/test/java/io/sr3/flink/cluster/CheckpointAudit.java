package io.sr3.flink.cluster;

import io.sr3.flink.fs.RingCensus;
import io.sr3.flink.fs.RingCensus.FileCensus;
import io.sr3.flink.node.RingNode;
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

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads every block of every file of retained checkpoints over the ring and counts its intact
 * replicas ({@link RingCensus}): the {@code _metadata} file, and every file its state handles
 * name, found by walking the handles Flink itself deserializes.
 */
final class CheckpointAudit {

    /**
     * What the audit found.
     *
     * @param checkpoints checkpoints audited
     * @param files files read (metadata included)
     * @param blocks blocks counted
     * @param bytes bytes the files' manifests record
     * @param lostBytes bytes of blocks without an intact replica, of files whose manifest is gone, or
     *     of checkpoints whose metadata could not be read
     * @param replicaHistogram blocks by their number of intact replicas
     * @param problems one line per file that is lost, short or under-replicated
     */
    record Result(int checkpoints, int files, long blocks, long bytes, long lostBytes, Map<Integer, Long> replicaHistogram,
            List<String> problems) {

        /** Blocks with fewer than {@code replicas} intact copies. */
        long blocksBelow(int replicas) {
            return replicaHistogram.entrySet().stream().filter(e -> e.getKey() < replicas).mapToLong(Map.Entry::getValue).sum();
        }

        int minReplicas() {
            return replicaHistogram.isEmpty() ? 0 : replicaHistogram.keySet().iterator().next();
        }
    }

    private CheckpointAudit() {}

    /**
     * @param node a ring node of this JVM (a client) that sees every storage member
     * @param checkpointPaths {@code external_path}s of completed checkpoints, as the REST API gives them
     * @param replicationFactor the wanted replicas; files with fewer are listed as problems
     */
    static Result audit(RingNode node, List<String> checkpointPaths, int replicationFactor) {
        Map<Integer, Long> histogram = new TreeMap<>();
        List<String> problems = new ArrayList<>();
        Map<String, Long> files = new LinkedHashMap<>();
        long blocks = 0;
        long bytes = 0;
        long lost = 0;
        for (String checkpoint : checkpointPaths) {
            String metadataPath = checkpoint.replaceAll("/+$", "") + "/_metadata";
            Map<String, Long> referenced = new LinkedHashMap<>();
            try {
                FileCensus metadata = RingCensus.of(node, metadataPath);
                files.put(metadataPath, metadata.length());
                if (metadata.content() == null) {
                    problems.add(metadataPath + ": lost blocks " + metadata.blocks());
                } else {
                    CheckpointMetadata parsed = Checkpoints.loadCheckpointMetadata(
                            new DataInputStream(new ByteArrayInputStream(metadata.content())),
                            CheckpointAudit.class.getClassLoader(), checkpoint);
                    for (OperatorState operator : parsed.getOperatorStates()) {
                        for (OperatorSubtaskState subtask : operator.getStates()) {
                            collect(subtask, referenced, problems);
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                problems.add(checkpoint + ": metadata unreadable: " + e);
                lost += 1; // the size is unknown; at least count it
            }
            files.putAll(referenced);
        }
        for (Map.Entry<String, Long> file : files.entrySet()) {
            try {
                FileCensus census = RingCensus.of(node, file.getKey());
                for (RingCensus.BlockCensus block : census.blocks()) {
                    histogram.merge(block.replicas(), 1L, Long::sum);
                }
                blocks += census.blocks().size();
                bytes += census.length();
                lost += census.lostBytes();
                if (file.getValue() >= 0 && census.length() != file.getValue()) {
                    // A tombstone or a truncated manifest: the state the handle names is gone, whatever the blocks say.
                    problems.add(file.getKey() + ": manifest says " + census.length() + " bytes, the state handle "
                            + file.getValue());
                    lost += Math.max(0, file.getValue() - (census.length() - census.lostBytes()));
                }
                if (census.lostBytes() > 0 || census.minReplicas() < replicationFactor) {
                    problems.add(file.getKey() + ": " + census.blocks().size() + " blocks, fewest intact replicas "
                            + census.minReplicas() + ", lost bytes " + census.lostBytes() + "; " + census.blocks());
                }
            } catch (IOException | RuntimeException e) {
                problems.add(file.getKey() + ": unreadable: " + e);
                lost += Math.max(1, file.getValue());
            }
        }
        return new Result(checkpointPaths.size(), files.size(), blocks, bytes, lost, histogram, problems);
    }

    /**
     * Adds the {@code sr3://} files under one subtask's state handles to {@code files} (path to the
     * size the handle records); a handle type the audit cannot walk is added to {@code problems}.
     */
    static void collect(OperatorSubtaskState subtask, Map<String, Long> files, List<String> problems) {
        List<StateObject> handles = new ArrayList<>();
        handles.addAll(subtask.getManagedKeyedState());
        handles.addAll(subtask.getRawKeyedState());
        handles.addAll(subtask.getManagedOperatorState());
        handles.addAll(subtask.getRawOperatorState());
        handles.addAll(subtask.getInputChannelState());
        handles.addAll(subtask.getUpstreamOutputBufferState());
        handles.addAll(subtask.getResultSubpartitionState());
        for (StateObject handle : handles) {
            collect(handle, files, problems);
        }
    }

    /** Adds the sr3 files under a handle; a handle type the audit does not know is a problem, not skipped. */
    private static void collect(StateObject handle, Map<String, Long> files, List<String> problems) {
        if (handle == null || handle instanceof ByteStreamStateHandle) {
            return; // inline in _metadata
        }
        if (handle instanceof FileStateHandle file) {
            files.put(file.getFilePath().toString(), file.getStateSize());
        } else if (handle instanceof KeyGroupsStateHandle keyGroups) {
            collect(keyGroups.getDelegateStateHandle(), files, problems);
        } else if (handle instanceof IncrementalRemoteKeyedStateHandle incremental) {
            collect(incremental.getMetaDataStateHandle(), files, problems);
            for (HandleAndLocalPath shared : incremental.getSharedState()) {
                collect(shared.getHandle(), files, problems);
            }
            for (HandleAndLocalPath own : incremental.getPrivateState()) {
                collect(own.getHandle(), files, problems);
            }
        } else if (handle instanceof OperatorStreamStateHandle operator) {
            collect(operator.getDelegateStateHandle(), files, problems);
        } else if (handle instanceof AbstractChannelStateHandle<?> channel) {
            collect(channel.getDelegate(), files, problems);
        } else {
            problems.add("a state handle the audit cannot walk: " + handle.getClass().getName() + " " + handle);
        }
    }
}
