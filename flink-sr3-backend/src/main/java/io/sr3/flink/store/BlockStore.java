package io.sr3.flink.store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A node's blocks on its local disk, one file per block.
 *
 * <p>Each block file holds a header (magic, version, data length, CRC32C) and the data; {@link
 * BlockFileFormat} draws the layout. Writes go to a temporary file that is renamed into place
 * atomically, so a reader sees either the whole block or none of it. Every read checks magic,
 * version, length and checksum and throws {@link CorruptBlockException} instead of returning
 * damaged bytes. Puts, deletes and {@link #compareAndPut} of one key are serialized (striped
 * locks), so a compare-and-put sees no other change between its read and its write.
 *
 * <p>Blocks are a company's checkpointed state: on file systems with POSIX permissions the store
 * directory is created {@code 0700} and every block file {@code 0600}, so only the node's own
 * user can read them. A directory that already exists keeps its permissions; one that other users
 * may enter is logged as a warning when the store opens.
 */
@ThreadSafe
public final class BlockStore {

    private static final Logger LOG = LoggerFactory.getLogger(BlockStore.class);

    /** Where {@link #quarantineIfCorrupt} moves a damaged block: a name no key can have, so nothing serves or lists it. */
    static final String QUARANTINE_PREFIX = ".corrupt-";
    private static final Pattern VALID_KEY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,199}");

    private final Path directory;
    private final BlockFileFormat format;
    private final StoreCapacity capacity;
    private final Object[] keyLocks = new Object[64];

    /** A store without a size limit. */
    public BlockStore(Path directory, boolean fsync) throws IOException {
        this(directory, fsync, Long.MAX_VALUE);
    }

    /**
     * Opens (and creates) the store directory, removing temporary files a crashed writer left.
     *
     * @param fsync whether each block is forced to disk before it is acknowledged
     * @param maxBytes the most bytes (headers included) the store may hold; a put that would pass
     *     it fails with {@link StoreFullException} before anything is written
     */
    public BlockStore(Path directory, boolean fsync, long maxBytes) throws IOException {
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be positive, was " + maxBytes);
        }
        this.directory = OwnerOnlyPermissions.createDirectory(directory);
        this.format = new BlockFileFormat(this.directory, OwnerOnlyPermissions.fileAttributes(directory), fsync);
        warnIfOthersMayEnter(this.directory);
        for (int i = 0; i < keyLocks.length; i++) {
            keyLocks[i] = new Object();
        }
        long existing = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (Path file : files) {
                if (file.getFileName().toString().startsWith(BlockFileFormat.TEMP_PREFIX)) {
                    Files.deleteIfExists(file);
                } else if (!file.getFileName().toString().startsWith(NodeIdentity.FILE_PREFIX)
                        && !file.getFileName().toString().startsWith(QUARANTINE_PREFIX)) {
                    existing += Files.size(file);
                }
            }
        }
        this.capacity = new StoreCapacity(maxBytes, this.directory, existing);
    }

    public Path directory() {
        return directory;
    }

    /** Logs once, as the store opens, that a directory made before (or by hand) lets other users in. */
    private static void warnIfOthersMayEnter(Path directory) {
        try {
            String permissions = OwnerOnlyPermissions.othersMayEnter(directory);
            if (permissions != null) {
                LOG.warn("sr3 block store {} has permissions {}: users other than its owner may read checkpoint "
                        + "blocks in it. Restrict it with 'chmod -R go-rwx {}'.", directory, permissions, directory);
            }
        } catch (IOException e) {
            LOG.warn("Could not read the permissions of the sr3 block store {}: {}", directory, e.toString());
        }
    }

    /** Bytes on disk in complete block files, headers included. */
    public long bytesStored() {
        return capacity.bytesStored();
    }

    /**
     * Stores a block, replacing any block with the same key. Atomic: no torn block is ever visible.
     *
     * @throws StoreFullException if the block does not fit under the store's size limit; nothing
     *     was written then
     */
    public void put(String key, byte[] data) throws IOException {
        put(key, data, BlockFileFormat.crc32c(data));
    }

    /**
     * Like {@link #put(String, byte[])} for data whose CRC32C the caller already holds (it was
     * computed where the block was filled, or verified as it arrived): it goes into the block's
     * header as it is, so a wrong one makes every later read fail verification.
     */
    public void put(String key, byte[] data, int crc32c) throws IOException {
        put(key, ByteBuffer.wrap(data), crc32c);
    }

    /** Like {@link #put(String, byte[], int)} for the bytes between {@code data}'s position and limit (which stay). */
    public void put(String key, ByteBuffer data, int crc32c) throws IOException {
        Path target = fileOf(key);
        synchronized (lockOf(key)) {
            putLocked(key, target, data, crc32c);
        }
    }

    private Object lockOf(String key) {
        return keyLocks[Math.floorMod(key.hashCode(), keyLocks.length)];
    }

    /**
     * What {@link #compareAndPut} did.
     *
     * @param swapped whether the key now holds the replacement (or, for a delete, nothing)
     * @param found the value the key held before, null if none (or unreadable: see {@link #compareAndPut})
     */
    public record Swap(boolean swapped, @Nullable byte[] found) {}

    /**
     * Replaces the value under {@code key} with {@code replacement} (null: deletes it) if the
     * current value equals {@code expected} (null: the key is absent) or already equals the
     * replacement, atomically with respect to every other change of the key in this store. A
     * value that fails verification counts as absent: it holds nothing a reader can use.
     */
    public Swap compareAndPut(String key, @Nullable byte[] expected, @Nullable byte[] replacement) throws IOException {
        Path target = fileOf(key);
        synchronized (lockOf(key)) {
            byte[] current;
            try {
                current = read(key).data();
            } catch (BlockNotFoundException e) {
                current = null;
            } catch (CorruptBlockException e) {
                LOG.warn("Compare-and-put of {} treats its damaged value as absent: {}", key, e.getMessage());
                current = null;
            }
            if (!Arrays.equals(current, expected) && !Arrays.equals(current, replacement)) {
                return new Swap(false, current);
            }
            if (replacement == null) {
                deleteLocked(target);
            } else if (!Arrays.equals(current, replacement)) {
                putLocked(key, target, ByteBuffer.wrap(replacement), BlockFileFormat.crc32c(replacement));
            }
            return new Swap(true, current);
        }
    }

    private void putLocked(String key, Path target, ByteBuffer data, int crc32c) throws IOException {
        long growth = BlockFileFormat.HEADER_SIZE + (long) data.remaining() - sizeOrZero(target);
        capacity.reserve(key, growth);
        try {
            format.write(key, target, data, crc32c);
        } catch (IOException | RuntimeException e) {
            capacity.release(growth);
            throw e;
        }
    }

    /** When a block was stored, in milliseconds since the epoch. */
    public long lastModifiedMillis(String key) throws IOException {
        try {
            return Files.getLastModifiedTime(fileOf(key)).toMillis();
        } catch (NoSuchFileException e) {
            throw new BlockNotFoundException(key, directory);
        }
    }

    /**
     * Reads a block and verifies it.
     *
     * @throws BlockNotFoundException if this store has no such block
     * @throws CorruptBlockException if the stored bytes fail verification
     */
    public byte[] get(String key) throws IOException {
        return read(key).data();
    }

    /**
     * Reads a verified block and checks that it is the content a manifest expects. The store's
     * own checksum was just verified over the data, so comparing it with the expected one proves
     * the content without hashing it a second time.
     *
     * @throws CorruptBlockException if the stored block is damaged or holds other content
     */
    public byte[] get(String key, int expectedLength, int expectedCrc32c) throws IOException {
        Block block = read(key);
        if (block.data().length != expectedLength || block.crc32c() != expectedCrc32c) {
            throw new CorruptBlockException(key, directory, String.format(
                    "holds %d bytes with CRC32C 0x%08x, expected %d bytes with CRC32C 0x%08x",
                    block.data().length, block.crc32c(), expectedLength, expectedCrc32c));
        }
        return block.data();
    }

    /** A block's data and its verified checksum. */
    public record Block(byte[] data, int crc32c) {}

    /**
     * Reads a block's header and data straight into place (no copy of the whole file) and
     * verifies them; the checksum comes along, so whoever sends the block on need not compute it.
     *
     * @throws BlockNotFoundException if this store has no such block
     * @throws CorruptBlockException if the stored bytes fail verification
     */
    public Block read(String key) throws IOException {
        return format.read(key, fileOf(key));
    }

    /**
     * Reads a block into {@code target} (from its position 0, a direct buffer for a read without
     * a heap copy), verifies it and checks that it is the content a manifest expects, like {@link
     * #get(String, int, int)}; on return {@code target} holds the data between 0 and its limit.
     * Restores read their own blocks this way into reused buffers, so a 4 MiB block costs no
     * (humongous) heap array.
     *
     * @throws IllegalArgumentException if {@code target} cannot hold {@code expectedLength} bytes
     * @throws BlockNotFoundException if this store has no such block
     * @throws CorruptBlockException if the stored block is damaged or holds other content
     */
    public ByteBuffer readInto(String key, int expectedLength, int expectedCrc32c, ByteBuffer target)
            throws IOException {
        if (target.capacity() < expectedLength) {
            throw new IllegalArgumentException("A buffer of " + target.capacity() + " bytes cannot hold block " + key
                    + " of " + expectedLength + " bytes");
        }
        return format.readInto(key, fileOf(key), expectedLength, expectedCrc32c, target);
    }

    /**
     * What a block's header says about it, compared with the content a manifest expects: read
     * from the first {@value BlockFileFormat#HEADER_SIZE} bytes and the file's size only, so a holder can answer
     * for many blocks without reading their data. A header that matches does not prove the data
     * (that is what {@link #read} and the scrubber check); a block that fails here fails {@link
     * #get(String, int, int)} too.
     *
     * @param state {@link State#INTACT} when the header matches the expected length and CRC32C
     *     and the file holds that many bytes
     * @param detail why the block is not intact, empty when it is
     */
    public record Presence(State state, String detail) {

        /** Whether the block is there as expected. */
        public enum State {
            INTACT,
            MISSING,
            CORRUPT
        }

        public Presence {
            java.util.Objects.requireNonNull(state, "state");
            java.util.Objects.requireNonNull(detail, "detail");
        }

        static final Presence INTACT_BLOCK = new Presence(State.INTACT, "");
    }

    /** Checks a block's header and size against the expected content (see {@link Presence}); reads no data. */
    public Presence presence(String key, int expectedLength, int expectedCrc32c) throws IOException {
        return format.presence(fileOf(key), expectedLength, expectedCrc32c);
    }

    /**
     * Verifies a block again under its key's lock and, if it fails, moves its file out of the
     * store (to {@code .corrupt-<key>} in the store directory, replacing an older quarantined copy
     * of the key), so it is never served, listed or counted again and a later put of the key
     * starts afresh. The moved file stays for the operator to inspect; its bytes no longer count
     * towards {@link #bytesStored}.
     *
     * @return why the block failed verification, or null if it is intact or absent (nothing moved)
     */
    @Nullable
    public String quarantineIfCorrupt(String key) throws IOException {
        Path file = fileOf(key);
        synchronized (lockOf(key)) {
            try {
                read(key);
                return null;
            } catch (BlockNotFoundException e) {
                return null;
            } catch (CorruptBlockException | java.io.EOFException e) {
                long size = sizeOrZero(file);
                Files.move(file, quarantined(key), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                capacity.release(size);
                return e.getMessage();
            }
        }
    }

    /** Where {@link #quarantineIfCorrupt} puts a damaged block of {@code key}. */
    public Path quarantined(String key) {
        return directory.resolve(QUARANTINE_PREFIX + fileOf(key).getFileName());
    }

    public boolean contains(String key) {
        return Files.exists(fileOf(key));
    }

    /** Deletes a block; deleting a missing block is not an error. */
    public void delete(String key) throws IOException {
        Path file = fileOf(key);
        synchronized (lockOf(key)) {
            deleteLocked(file);
        }
    }

    private void deleteLocked(Path file) throws IOException {
        long size = sizeOrZero(file);
        if (Files.deleteIfExists(file)) {
            capacity.release(size);
        }
    }

    /** The keys of all complete blocks that start with {@code prefix}. */
    public List<String> keys(String prefix) throws IOException {
        List<String> keys = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, prefix.replace("*", "") + "*")) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                // No key starts with '.': temporary and quarantined files are not blocks.
                if (!name.startsWith(".") && !name.startsWith(NodeIdentity.FILE_PREFIX)) {
                    keys.add(name);
                }
            }
        }
        return keys;
    }

    /** Deletes every block and the directory. */
    public void destroy() throws IOException {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (Path file : files) {
                Files.deleteIfExists(file);
            }
        }
        Files.deleteIfExists(directory);
        capacity.clear();
        LOG.info("Deleted sr3 block store {}", directory);
    }

    /** The file of a key; keys are validated so that none can escape the directory. */
    Path fileOf(String key) {
        if (!VALID_KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("Invalid block key '" + key + "': expected [A-Za-z0-9._-], at most 200 characters, not starting with '.' or '-'");
        }
        return directory.resolve(key);
    }

    /** Bytes a block takes on disk (its header included); 0 if it is not stored. */
    public long sizeOnDisk(String key) {
        return sizeOrZero(fileOf(key));
    }

    private static long sizeOrZero(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }
}
