package io.sr3.flink.tools;

import io.sr3.flink.fs.FileBlock;
import io.sr3.flink.fs.Sr3FileSystem;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.store.CorruptBlockException;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.RemoteException;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.zip.CRC32C;

/**
 * {@code sr3 fsck}: reads every replica of every block of every file under a path, or of a
 * checkpoint, and verifies each against the length and CRC32C the file's manifest records.
 */
@NotThreadSafe
final class Fsck {

    /** What one replica held. */
    enum ReplicaState {
        INTACT,
        MISSING,
        CORRUPT,
        UNREACHABLE
    }

    private final AdminConnection connection;
    private final PrintStream out;
    private long files;
    private long blocks;
    private long bytes;
    private final Map<ReplicaState, Long> replicas = new LinkedHashMap<>();
    private long underReplicatedBlocks;
    private long lostBlocks;
    private final List<String> unreadable = new ArrayList<>();

    Fsck(AdminConnection connection, PrintStream out) {
        this.connection = connection;
        this.out = out;
        for (ReplicaState state : ReplicaState.values()) {
            replicas.put(state, 0L);
        }
    }

    /** Checks {@code path}; returns 1 if any file cannot be read, else 0. */
    int check(Path path, boolean everyBlock) throws IOException {
        FileSystem fs = path.getFileSystem();
        if (!(fs instanceof Sr3FileSystem ring)) {
            throw new IllegalArgumentException("fsck checks sr3:// paths, not " + path);
        }
        Map<Path, Long> toCheck = new LinkedHashMap<>(); // path -> length a state handle records, -1 if none
        Path metadata = CheckpointFiles.metadataOf(fs, path);
        if (metadata != null) {
            out.println("Checkpoint " + metadata.getParent() + ": " + CheckpointFiles.METADATA
                    + " and every file its state handles name");
        }
        if (fs.getFileStatus(path).isDir()) {
            walk(fs, path, toCheck);
        } else {
            toCheck.put(CheckpointFiles.normalized(path), -1L);
        }
        if (metadata != null) {
            try {
                CheckpointFiles checkpoint = CheckpointFiles.read(fs, metadata);
                toCheck.putAll(checkpoint.files());
                for (String type : checkpoint.unwalked()) {
                    out.println("WARNING: a state handle of type " + type + " is not walked; files it names are not "
                            + "checked");
                }
            } catch (IOException e) {
                unreadable.add(metadata.toString());
                out.println("UNREADABLE " + metadata + ": " + e.getMessage());
            }
        }
        for (Map.Entry<Path, Long> file : toCheck.entrySet()) {
            if (!file.getKey().toUri().getScheme().equals("sr3")) {
                out.println("NOT ON THE RING " + file.getKey() + " (not checked)");
                continue;
            }
            checkFile(ring, file.getKey(), file.getValue(), everyBlock);
        }
        return summary();
    }

    private static void walk(FileSystem fs, Path directory, Map<Path, Long> files) throws IOException {
        for (FileStatus child : Listing.sorted(fs.listStatus(directory))) {
            if (child.isDir()) {
                walk(fs, child.getPath(), files);
            } else {
                files.put(CheckpointFiles.normalized(child.getPath()), -1L);
            }
        }
    }

    private void checkFile(Sr3FileSystem ring, Path path, long expectedLength, boolean everyBlock) {
        files++;
        List<FileBlock> fileBlocks;
        int wanted;
        try {
            wanted = ring.getFileStatus(path).getReplication();
            fileBlocks = ring.fileBlocks(path);
        } catch (FileNotFoundException e) {
            unreadable.add(path.toString());
            out.println("MISSING " + path + ": " + e.getMessage());
            return;
        } catch (IOException | RuntimeException e) {
            unreadable.add(path.toString());
            out.println("UNREADABLE " + path + ": " + e.getMessage());
            return;
        }
        long length = fileBlocks.stream().mapToLong(FileBlock::length).sum();
        bytes += length;
        List<String> lines = new ArrayList<>();
        int fewest = Integer.MAX_VALUE;
        boolean lost = false;
        for (int i = 0; i < fileBlocks.size(); i++) {
            FileBlock block = fileBlocks.get(i);
            blocks++;
            Map<Member, String> answers = checkReplicas(block);
            int intact = (int) answers.values().stream().filter(a -> a.equals(ReplicaState.INTACT.name())).count();
            fewest = Math.min(fewest, intact);
            boolean problem = intact < wanted;
            if (intact == 0) {
                lostBlocks++;
                lost = true;
            } else if (intact < wanted) {
                underReplicatedBlocks++;
            }
            if (problem || everyBlock) {
                lines.add(String.format("  block %d %s offset %d length %d crc32c %08x: %d of %d wanted replicas intact%s",
                        i, block.key(), block.offset(), block.length(), block.crc32c(), intact, wanted,
                        intact == 0 ? " LOST" : problem ? " UNDER-REPLICATED" : ""));
                answers.forEach((holder, answer) -> lines.add("    " + holder + " " + answer));
            }
        }
        String state;
        if (lost) {
            state = "CORRUPT";
            unreadable.add(path.toString());
        } else if (expectedLength >= 0 && expectedLength != length) {
            state = "CORRUPT";
            unreadable.add(path.toString());
            lines.add("  its state handle records " + expectedLength + " bytes, its manifest " + length);
        } else if (fewest < wanted) {
            state = "UNDER-REPLICATED";
        } else {
            state = "OK";
        }
        out.printf("%s %s %d bytes, %d block(s)%s%n", state, path, length, fileBlocks.size(),
                fileBlocks.isEmpty() ? "" : ", fewest intact replicas " + fewest);
        lines.forEach(out::println);
    }

    /** Each holder's answer for one block: {@code INTACT}, or the state and what was wrong. */
    private Map<Member, String> checkReplicas(FileBlock block) {
        RingNode node = connection.node();
        Map<Member, CompletableFuture<byte[]>> reads = new LinkedHashMap<>();
        Map<Member, String> answers = new LinkedHashMap<>();
        for (Member holder : block.holders()) {
            if (node.membership().isLive(holder)) {
                reads.put(holder, node.get(holder, block.key()));
            } else {
                answers.put(holder, ReplicaState.UNREACHABLE + ": not a live member of the ring");
            }
        }
        reads.forEach((holder, read) -> answers.put(holder, answer(read, block)));
        for (String answer : answers.values()) {
            ReplicaState state = ReplicaState.valueOf(answer.split(":", 2)[0]);
            replicas.merge(state, 1L, Long::sum);
        }
        return answers;
    }

    private static String answer(CompletableFuture<byte[]> read, FileBlock block) {
        byte[] data;
        try {
            data = read.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ReplicaState.UNREACHABLE + ": interrupted";
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            String message = String.valueOf(cause.getMessage());
            if (cause instanceof BlockNotFoundException
                    || (cause instanceof RemoteException remote && remote.code() == ErrorCode.NOT_FOUND)) {
                return ReplicaState.MISSING + ": " + message;
            }
            if (cause instanceof CorruptBlockException
                    || (cause instanceof RemoteException remote && remote.code() == ErrorCode.CORRUPT)) {
                return ReplicaState.CORRUPT + ": " + message;
            }
            return ReplicaState.UNREACHABLE + ": " + message;
        }
        if (data.length != block.length()) {
            return ReplicaState.CORRUPT + ": " + data.length + " bytes, the manifest records " + block.length();
        }
        CRC32C crc = new CRC32C();
        crc.update(data);
        if ((int) crc.getValue() != block.crc32c()) {
            return String.format("%s: CRC32C %08x, the manifest records %08x", ReplicaState.CORRUPT, (int) crc.getValue(),
                    block.crc32c());
        }
        return ReplicaState.INTACT.name();
    }

    private int summary() {
        out.printf("Files: %d, blocks: %d, bytes: %d; replicas: %d intact, %d missing, %d corrupt, %d unreachable%n",
                files, blocks, bytes, replicas.get(ReplicaState.INTACT), replicas.get(ReplicaState.MISSING),
                replicas.get(ReplicaState.CORRUPT), replicas.get(ReplicaState.UNREACHABLE));
        out.printf("Under-replicated blocks: %d (fewer intact replicas than their file's copies); "
                + "lost blocks: %d; files that cannot be read: %d%n", underReplicatedBlocks, lostBlocks,
                unreadable.size());
        String status = !unreadable.isEmpty() ? "CORRUPT" : underReplicatedBlocks > 0 ? "UNDER-REPLICATED" : "HEALTHY";
        out.println("Status: " + status);
        return unreadable.isEmpty() ? Sr3Admin.OK : Sr3Admin.FAILED;
    }
}
