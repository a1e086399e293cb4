package io.sr3.flink.cluster;

import io.sr3.flink.Sr3Options;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A TaskManager of a {@link Sr3FaultSoakITCase} round whose store is full: restarted with
 * {@code sr3.store.max-size} at the bytes its store directory holds plus {@code margin}, so that
 * every block a writer would add there is soon refused ({@code StoreFullException}) and goes to
 * the next node of its placement instead.
 *
 * @param taskManager the TaskManager's name
 * @param storeDirectory its {@code sr3.store.dir}
 * @param usedBytes what the store held when the node was down, counted as {@code BlockStore} counts
 *     it when it opens (every file but temporary ones and the node's identity files)
 * @param limitBytes the {@code sr3.store.max-size} it runs with
 * @param log the TaskManager's log file, which every start of it appends to
 * @param logOffset the log's length before the limited start: refusals are looked for after it
 */
record FullStore(String taskManager, Path storeDirectory, long usedBytes, long limitBytes, Path log, long logOffset) {

    /** Names of the files a store directory holds that are not blocks ({@code BlockStore}'s prefixes). */
    private static final List<String> NOT_BLOCKS = List.of(".tmp-", "sr3-node.");

    FullStore {
        if (usedBytes < 0 || limitBytes < usedBytes || logOffset < 0) {
            throw new IllegalArgumentException("Need 0 <= used <= limit and a log offset >= 0; got used " + usedBytes
                    + ", limit " + limitBytes + ", log offset " + logOffset + " for " + taskManager);
        }
    }

    /**
     * Measures the store of a TaskManager that is down and fixes its limit.
     *
     * @param margin bytes over its usage the store may take; at least one block and its header,
     *     the least {@code sr3.store.max-size} accepts
     */
    static FullStore of(ProcessCluster cluster, String taskManager, long margin) throws IOException {
        if (cluster.liveTaskManager(taskManager) != null) {
            throw new IllegalStateException(taskManager + " still runs; its store can only be measured while it is down");
        }
        Path store = cluster.storeDirectory(taskManager);
        long used = 0;
        try (Stream<Path> files = Files.list(store)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                String name = file.getFileName().toString();
                if (Files.isRegularFile(file) && NOT_BLOCKS.stream().noneMatch(name::startsWith)) {
                    used += Files.size(file);
                }
            }
        }
        Path log = cluster.workDir().resolve(taskManager).resolve(taskManager + ".log");
        return new FullStore(taskManager, store, used, used + margin, log, Files.exists(log) ? Files.size(log) : 0);
    }

    /** The configuration of the limited start. */
    Map<String, String> config() {
        return Map.of(Sr3Options.STORE_MAX_SIZE.key(), limitBytes + " b");
    }

    /**
     * Lines the TaskManager logged since its limited start that report a block or manifest its
     * store refused: the request handler's for puts from other nodes, the writer's for its own
     * (each names the store directory and says it is full).
     */
    List<String> refusals() {
        String full = storeDirectory + " is full";
        List<String> lines = new ArrayList<>();
        for (String line : logSinceStart().split("\n")) {
            if (line.contains(full)) {
                lines.add(line);
            }
        }
        return lines;
    }

    /** What the log gained since the limited start; read from there on, as the soak polls it. */
    private String logSinceStart() {
        try (SeekableByteChannel channel = Files.newByteChannel(log)) {
            long size = channel.size();
            ByteBuffer since = ByteBuffer.allocate((int) Math.max(0, size - logOffset));
            channel.position(Math.min(logOffset, size));
            while (since.hasRemaining() && channel.read(since) >= 0) {
                // read on until the buffer holds what the file had when it was opened
            }
            return new String(since.array(), 0, since.position(), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return ""; // not started far enough to log
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + log, e);
        }
    }

    @Override
    public String toString() {
        return taskManager + " with sr3.store.max-size " + limitBytes + " bytes (" + usedBytes + " stored)";
    }
}
