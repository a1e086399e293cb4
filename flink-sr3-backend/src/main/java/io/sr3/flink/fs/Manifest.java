package io.sr3.flink.fs;

import io.sr3.flink.ring.Member;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UTFDataFormatException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What the ring stores about one path: a file (its length and blocks, and for each block its size,
 * checksum and the nodes that acknowledged it), a directory, or a tombstone that records the
 * path's deletion.
 *
 * <p>Every manifest carries a generation: each change of a path (create, overwrite, delete,
 * rename, repair) stores a higher one, and readers take the copy with the highest generation
 * ({@link #NEWEST}). A tombstone outranks a manifest of the same generation, so a node that missed
 * a delete can never bring the file back while the tombstone lives.
 *
 * <p>Stored layout (big-endian; written into the block store like any blob):
 *
 * <pre>
 * magic "SR3M" i32 | version u8 | kind u8 (0 file, 1 directory, 2 tombstone) | generation i64
 * | modified i64 | length i64 | copies u8 | pathLength u16 | path utf8 | blockCount i32 | block*
 * block: keyLength u16 | key utf8 | length i32 | crc32c i32 | holderCount u8 | holder*
 * holder: nodeIdLength u16 | nodeId utf8 | addressLength u16 | host:port utf8 (where it was when recorded)
 * </pre>
 *
 * <p>{@code copies} is how many replicas of the file's blocks the writer was asked to keep (its
 * operator's replication plan), or {@link #RING_DEFAULT}: then {@code sr3.ring.replication-factor}
 * of the ring that reads it. Version 2 manifests, written before the field existed, read as
 * {@link #RING_DEFAULT}.
 */
record Manifest(String path, Kind kind, long generation, long modificationTime, long length, List<BlockRef> blocks,
        int copies) {

    static final int MAGIC = 0x5352334D; // "SR3M"
    static final byte VERSION = 3;
    /** The last layout without {@code copies}; still read. */
    static final byte VERSION_WITHOUT_COPIES = 2;
    /** {@code copies} of a file that follows the ring's replication factor. */
    static final int RING_DEFAULT = 0;
    /** The most copies a manifest can record (one unsigned byte, like its holder count). */
    static final int MAX_COPIES = 255;

    /** What a manifest describes. */
    enum Kind {
        FILE,
        DIRECTORY,
        TOMBSTONE
    }

    /** Highest generation first; at equal generations a tombstone, then the copy whose blocks list more holders. */
    static final Comparator<Manifest> NEWEST = Comparator.comparingLong(Manifest::generation)
            .thenComparing(m -> m.kind() == Kind.TOMBSTONE)
            .thenComparingInt(Manifest::holderCount);

    Manifest {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(kind, "kind");
        blocks = List.copyOf(blocks);
        long sum = 0;
        for (BlockRef block : blocks) {
            sum += block.length();
        }
        if (sum != length) {
            throw new IllegalArgumentException("Manifest of " + path + " says " + length + " bytes but its blocks hold " + sum);
        }
        if (kind != Kind.FILE && !blocks.isEmpty()) {
            throw new IllegalArgumentException(kind + " manifest " + path + " cannot have blocks");
        }
        if (copies < RING_DEFAULT || copies > MAX_COPIES) {
            throw new IllegalArgumentException("Manifest of " + path + " asks for " + copies + " copies; expected 1.."
                    + MAX_COPIES + ", or " + RING_DEFAULT + " for the ring's replication factor");
        }
    }

    static Manifest file(String path, long generation, long modificationTime, long length, List<BlockRef> blocks) {
        return file(path, generation, modificationTime, length, blocks, RING_DEFAULT);
    }

    static Manifest file(String path, long generation, long modificationTime, long length, List<BlockRef> blocks,
            int copies) {
        return new Manifest(path, Kind.FILE, generation, modificationTime, length, blocks, copies);
    }

    static Manifest directory(String path, long generation, long modificationTime) {
        return new Manifest(path, Kind.DIRECTORY, generation, modificationTime, 0, List.of(), RING_DEFAULT);
    }

    /** The record that {@code path} was deleted at {@code deletedAt}, outranking every earlier generation. */
    static Manifest tombstone(String path, long generation, long deletedAt) {
        return new Manifest(path, Kind.TOMBSTONE, generation, deletedAt, 0, List.of(), RING_DEFAULT);
    }

    /** The copies this file's blocks should have: its own, or {@code replicationFactor} when it follows the ring. */
    int copiesOr(int replicationFactor) {
        return copies == RING_DEFAULT ? replicationFactor : copies;
    }

    /**
     * The copies this manifest itself should have: never fewer than the replication factor (a
     * manifest is small, and a file whose manifest is lost is lost), more for a file that asks for
     * more.
     */
    int manifestCopies(int replicationFactor) {
        return Math.max(replicationFactor, copiesOr(replicationFactor));
    }

    /**
     * The generation of a change made at {@code nowMillis} to a path whose newest manifest has
     * generation {@code previous} (0 if none): a wall-clock value, so writers on different nodes
     * order their changes as they happened, and always above {@code previous}, so a clock that
     * runs behind cannot lose a change.
     */
    static long nextGeneration(long previous, long nowMillis) {
        return Math.max(previous + 1, nowMillis);
    }

    boolean directory() {
        return kind == Kind.DIRECTORY;
    }

    boolean isTombstone() {
        return kind == Kind.TOMBSTONE;
    }

    Manifest withPath(String newPath, long newGeneration) {
        return new Manifest(newPath, kind, newGeneration, modificationTime, length, blocks, copies);
    }

    Manifest withBlocks(List<BlockRef> newBlocks, long newGeneration) {
        return new Manifest(path, kind, newGeneration, modificationTime, length, newBlocks, copies);
    }

    /** This manifest with each holder replaced by {@code current(holder)}: its record at its current address. */
    Manifest withHolders(java.util.function.UnaryOperator<Member> current) {
        List<BlockRef> resolved = new ArrayList<>(blocks.size());
        for (BlockRef block : blocks) {
            List<Member> holders = new ArrayList<>(block.holders().size());
            for (Member holder : block.holders()) {
                holders.add(current.apply(holder));
            }
            resolved.add(new BlockRef(block.key(), block.length(), block.crc32c(), holders));
        }
        return new Manifest(path, kind, generation, modificationTime, length, resolved, copies);
    }

    private int holderCount() {
        int count = 0;
        for (BlockRef block : blocks) {
            count += block.holders().size();
        }
        return count;
    }

    /** One block of a file. */
    record BlockRef(String key, int length, int crc32c, List<Member> holders) {
        BlockRef {
            Objects.requireNonNull(key, "key");
            holders = List.copyOf(holders);
            if (length < 0) {
                throw new IllegalArgumentException("Block length must be >= 0, was " + length);
            }
        }
    }

    byte[] encode() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + blocks.size() * 96);
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(MAGIC);
            out.writeByte(VERSION);
            out.writeByte(kind.ordinal());
            out.writeLong(generation);
            out.writeLong(modificationTime);
            out.writeLong(length);
            out.writeByte(copies);
            out.writeUTF(path);
            out.writeInt(blocks.size());
            for (BlockRef block : blocks) {
                out.writeUTF(block.key());
                out.writeInt(block.length());
                out.writeInt(block.crc32c());
                out.writeByte(block.holders().size());
                for (Member holder : block.holders()) {
                    out.writeUTF(holder.nodeId());
                    out.writeUTF(holder.id());
                }
            }
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The fewest bytes one block entry takes: an empty key, its length, CRC32C and holder count. */
    private static final int MIN_BLOCK_BYTES = 2 + 4 + 4 + 1;

    /** The fewest bytes one holder takes: two empty length-prefixed strings. */
    private static final int MIN_HOLDER_BYTES = 2 + 2;

    /**
     * Decodes a manifest, rejecting anything that is not one (including trailing bytes). Every
     * count and length read is checked against the bytes that remain before anything is
     * allocated, so a hostile or damaged manifest costs no more memory than its own bytes.
     *
     * @throws IOException naming {@code source}, the field, the value it claims and the bytes left
     */
    static Manifest decode(byte[] encoded, String source) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(encoded));
        try {
            int magic = in.readInt();
            byte version = in.readByte();
            if (magic != MAGIC || (version != VERSION && version != VERSION_WITHOUT_COPIES)) {
                throw new IOException(String.format("Not an sr3 manifest (magic 0x%08x, version %d) from %s", magic, version, source));
            }
            int kindOrdinal = in.readUnsignedByte();
            if (kindOrdinal >= Kind.values().length) {
                throw new IOException("Manifest from " + source + " has unknown kind " + kindOrdinal);
            }
            Kind kind = Kind.values()[kindOrdinal];
            long generation = in.readLong();
            long modified = in.readLong();
            long length = in.readLong();
            int copies = version == VERSION_WITHOUT_COPIES ? RING_DEFAULT : in.readUnsignedByte();
            String path = readString(in, "path", source);
            int count = in.readInt();
            checkCount(count, MIN_BLOCK_BYTES, in, "block count", source);
            List<BlockRef> blocks = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String key = readString(in, "block key", source);
                int blockLength = in.readInt();
                int crc = in.readInt();
                int holderCount = in.readUnsignedByte();
                checkCount(holderCount, MIN_HOLDER_BYTES, in, "holder count of block " + key, source);
                List<Member> holders = new ArrayList<>(holderCount);
                for (int h = 0; h < holderCount; h++) {
                    String nodeId = readString(in, "holder node id", source);
                    Member address = Member.fromId(readString(in, "holder address", source));
                    holders.add(new Member(nodeId, address.host(), address.port(), ""));
                }
                blocks.add(new BlockRef(key, blockLength, crc, holders));
            }
            if (in.available() > 0) {
                throw new IOException("Manifest from " + source + " has " + in.available() + " trailing bytes");
            }
            return new Manifest(path, kind, generation, modified, length, blocks, copies);
        } catch (EOFException e) {
            throw new IOException("Malformed sr3 manifest from " + source + ": truncated at byte "
                    + (encoded.length - in.available()) + " of " + encoded.length, e);
        } catch (UTFDataFormatException | IllegalArgumentException e) {
            throw new IOException("Malformed sr3 manifest from " + source + ": " + e.getMessage(), e);
        }
    }

    /** Refuses a count of entries of at least {@code minBytes} each that the remaining bytes cannot hold. */
    private static void checkCount(int count, int minBytes, DataInputStream in, String field, String source)
            throws IOException {
        int left = in.available();
        if (count < 0 || (long) count * minBytes > left) {
            throw new IOException("Malformed sr3 manifest from " + source + ": " + field + " " + count
                    + " does not fit the " + left + " bytes left (each entry takes at least " + minBytes + ")");
        }
    }

    /**
     * A string as {@link DataOutputStream#writeUTF} wrote it, its u16 length checked against the
     * bytes left before {@link DataInputStream#readUTF} allocates for it.
     */
    private static String readString(DataInputStream in, String field, String source) throws IOException {
        in.mark(2);
        int length = in.readUnsignedShort();
        int left = in.available();
        if (length > left) {
            throw new IOException("Malformed sr3 manifest from " + source + ": " + field + " length " + length
                    + " exceeds the " + left + " bytes left");
        }
        in.reset();
        return in.readUTF();
    }
}
