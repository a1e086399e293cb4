package io.sr3.flink.benchmark.replication;

import io.sr3.flink.ring.ConsistentHash;
import io.sr3.flink.ring.Member;

import javax.annotation.Nullable;
import javax.annotation.concurrent.Immutable;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * One checkpoint file as the ring placed it: the nodes that hold its manifest and each of its
 * blocks, as bit sets over the ring's members (bit i = {@code ring.members().get(i)}). A failure
 * is a bit set of dead nodes; the file survives it when its manifest and every one of its blocks
 * keep a copy on a live node.
 *
 * <p>{@link #place} uses the keys and the placement of the real writer ({@code Sr3OutputStream},
 * {@code ManifestStore}):
 *
 * <pre>
 *   block i:  "b-" + fileId + "-" + i          placement(key, writer node, copies)
 *   manifest: "m-" + h(parent) + "-" + h(path)  placement(key, null, manifestCopies)
 *             h = first 16 hex digits of SHA-256 (as io.sr3.flink.fs.NamespaceKeys)
 * </pre>
 */
@Immutable
public final class PlacedFile {

    /** Bit sets are longs. */
    public static final int MOST_NODES = Long.SIZE;

    private final long manifestHolders;
    /** The distinct holder sets of the blocks: a file survives iff each of them keeps a live node. */
    private final long[] blockHolders;

    /**
     * @param manifestHolders the nodes holding the manifest, not empty
     * @param blockHolders the nodes holding each block, none empty (a file may have no blocks)
     */
    public PlacedFile(long manifestHolders, long[] blockHolders) {
        if (manifestHolders == 0) {
            throw new IllegalArgumentException("A placed file's manifest needs at least one holder");
        }
        for (int i = 0; i < blockHolders.length; i++) {
            if (blockHolders[i] == 0) {
                throw new IllegalArgumentException("Block " + i + " of a placed file has no holder");
            }
        }
        this.manifestHolders = manifestHolders;
        this.blockHolders = Arrays.stream(blockHolders).distinct().sorted().toArray();
    }

    /** Places a file of {@code blocks} blocks on {@code ring}, as the writer on {@code writer} would. */
    public static PlacedFile place(ConsistentHash ring, String path, String fileId, int blocks, @Nullable Member writer,
            int copies, int manifestCopies) {
        if (ring.size() > MOST_NODES) {
            throw new IllegalArgumentException("At most " + MOST_NODES + " nodes, the ring has " + ring.size());
        }
        long[] holders = new long[blocks];
        for (int i = 0; i < blocks; i++) {
            holders[i] = mask(ring, ring.placement("b-" + fileId + "-" + i, writer, copies));
        }
        return new PlacedFile(mask(ring, ring.placement(manifestKey(path), null, manifestCopies)), holders);
    }

    /** Whether the manifest and every block keep a copy on a node outside {@code deadNodes}. */
    public boolean survives(long deadNodes) {
        if ((manifestHolders & ~deadNodes) == 0) {
            return false;
        }
        for (long holders : blockHolders) {
            if ((holders & ~deadNodes) == 0) {
                return false;
            }
        }
        return true;
    }

    /** The nodes as a bit set over {@code ring.members()}. */
    public static long mask(ConsistentHash ring, List<Member> nodes) {
        long mask = 0;
        List<Member> members = ring.members();
        for (Member node : nodes) {
            int index = -1;
            for (int i = 0; i < members.size() && index < 0; i++) {
                index = members.get(i).sameNode(node) ? i : -1;
            }
            if (index < 0) {
                throw new IllegalArgumentException(node + " is not a member of " + ring);
            }
            mask |= 1L << index;
        }
        return mask;
    }

    /** The store key of the manifest of {@code path}, as {@code io.sr3.flink.fs.NamespaceKeys#manifestKey}. */
    static String manifestKey(String path) {
        int slash = path.lastIndexOf('/');
        String parent = slash <= 0 ? "/" : path.substring(0, slash);
        return "m-" + sha256Prefix(parent) + "-" + sha256Prefix(path);
    }

    private static String sha256Prefix(String s) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }
}
