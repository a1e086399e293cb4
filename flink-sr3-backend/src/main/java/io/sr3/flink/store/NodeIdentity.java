package io.sr3.flink.store;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The persistent identity of a storage node, kept in its store directory (the model is HDFS's
 * storage id and Cassandra's host id): written once at the first start, read at every start after,
 * so a node that restarts with its disk, on any address, is the same member with the same blocks.
 *
 * <p>While a node runs it holds a lock on the directory, so two nodes (two processes, or two nodes
 * of one JVM) can never share a store and an identity.
 *
 * <p>A store created by a node of a named cluster ({@code sr3.ring.cluster-id}) records that name,
 * and a node of another cluster refuses it: two clusters' checkpoints never mix in one store (a
 * persistent volume mounted into the wrong deployment, a copied directory).
 *
 * <p>Both files are created readable by the node's user only, like the blocks (see {@link BlockStore}).
 *
 * <pre>
 * sr3-node.id:   "sr3-node-id v1 " nodeId "\n" [ "cluster " clusterId "\n" ]
 *                nodeId: "n" + 16 hex digits; clusterId: no whitespace
 * sr3-node.lock: empty; locked while the node runs
 * </pre>
 */
@ThreadSafe
public final class NodeIdentity implements AutoCloseable {

    /** Names of the identity's files start with this; the block store skips them. */
    static final String FILE_PREFIX = "sr3-node.";
    static final String ID_FILE = FILE_PREFIX + "id";
    static final String LOCK_FILE = FILE_PREFIX + "lock";
    private static final Pattern FORMAT = Pattern.compile("sr3-node-id v1 (n[0-9a-f]{16})\n(?:cluster (\\S+)\n)?");

    private final String nodeId;
    private final FileChannel lockChannel;
    private final FileLock lock;

    private NodeIdentity(String nodeId, FileChannel lockChannel, FileLock lock) {
        this.nodeId = nodeId;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /** {@link #open(Path, String)} for a node of no named cluster. */
    public static NodeIdentity open(Path storeDirectory) throws IOException {
        return open(storeDirectory, null);
    }

    /**
     * Locks {@code storeDirectory} and reads its node id, creating one if the store is new.
     *
     * @param clusterId the cluster this node belongs to, recorded in a new store and checked
     *     against the one an existing store recorded; null for none
     * @throws IOException if another node uses the directory, its id file is damaged, or it
     *     belongs to another cluster
     */
    public static NodeIdentity open(Path storeDirectory, @Nullable String clusterId) throws IOException {
        OwnerOnlyPermissions.createDirectory(storeDirectory);
        FileChannel channel = FileChannel.open(storeDirectory.resolve(LOCK_FILE),
                Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE), OwnerOnlyPermissions.fileAttributes(storeDirectory));
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            channel.close();
            throw new IOException("sr3 store directory " + storeDirectory + " is in use by another ring node (in this "
                    + "or another process): every node needs a store directory of its own (sr3.store.dir)");
        }
        try {
            return new NodeIdentity(readOrCreate(storeDirectory, clusterId), channel, lock);
        } catch (IOException | RuntimeException e) {
            lock.release();
            channel.close();
            throw e;
        }
    }

    private static String readOrCreate(Path directory, @Nullable String clusterId) throws IOException {
        Path file = directory.resolve(ID_FILE);
        if (Files.exists(file)) {
            String content = Files.readString(file, StandardCharsets.UTF_8);
            Matcher matcher = FORMAT.matcher(content);
            if (!matcher.matches()) {
                throw new IOException("sr3 node id file " + file + " is damaged (" + content.length() + " bytes, not '"
                        + "sr3-node-id v1 n<16 hex digits>'): the store's blocks cannot be attributed to a node. Restore "
                        + "the file, or move the directory away to start this node with an empty store.");
            }
            String recorded = matcher.group(2);
            if (recorded != null && clusterId != null && !recorded.equals(clusterId)) {
                throw new IOException("sr3 store directory " + directory + " belongs to cluster '" + recorded + "', but "
                        + "this node is of cluster '" + clusterId + "' (sr3.ring.cluster-id): refusing to mix two "
                        + "clusters' checkpoints. Point sr3.store.dir elsewhere, or move the directory away.");
            }
            return matcher.group(1);
        }
        String nodeId = "n" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        Path temp = directory.resolve(ID_FILE + ".new");
        String content = "sr3-node-id v1 " + nodeId + "\n" + (clusterId == null ? "" : "cluster " + clusterId + "\n");
        Files.deleteIfExists(temp); // left by a start that crashed before the rename
        try (FileChannel out = FileChannel.open(temp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                OwnerOnlyPermissions.fileAttributes(directory))) {
            ByteBuffer bytes = ByteBuffer.wrap(content.getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining()) {
                out.write(bytes);
            }
            out.force(true);
        }
        try {
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, file);
        }
        return nodeId;
    }

    public String nodeId() {
        return nodeId;
    }

    /** Releases the directory. */
    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            lockChannel.close();
        }
    }
}
