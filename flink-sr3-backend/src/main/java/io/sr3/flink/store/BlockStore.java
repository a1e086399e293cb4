package io.sr3.flink.store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * A node's blocks on its local disk, one file per block.
 *
 * <p>Stored layout of each block file (big-endian):
 *
 * <pre>
 * +---------+---------+-------------+-----------+------------------+
 * | magic   | version | data length | crc32c    | data             |
 * | "SR3B"  | 1 byte  | 8 bytes     | 4 bytes   | data length      |
 * +---------+---------+-------------+-----------+------------------+
 * </pre>
 *
 * <p>Writes go to a temporary file that is renamed into place atomically, so a reader sees
 * either the whole block or none of it. Every read checks magic, version, length and checksum
 * and throws {@link CorruptBlockException} instead of returning damaged bytes. Puts, deletes and
 * {@link #compareAndPut} of one key are serialized (striped locks), so a compare-and-put sees no
 * other change between its read and its write.
 *
 * <p>Blocks are a company's checkpointed state: on file systems with POSIX permissions the store
 * directory is created {@code 0700} and every block file {@code 0600}, so only the node's own
 * user can read them. A directory that already exists keeps its permissions; one that other users
 * may enter is logged as a warning when the store opens.
 */
@ThreadSafe
public final class BlockStore {

    private static final Logger LOG = LoggerFactory.getLogger(BlockStore.class);

    static final int MAGIC = 0x53523342; // "SR3B"
    static final byte VERSION = 1;
    static final int HEADER_SIZE = 4 + 1 + 8 + 4;
    private static final String TEMP_PREFIX = ".tmp-";
    /** Where {@link #quarantineIfCorrupt} moves a damaged block: a name no key can have, so nothing serves or lists it. */
    static final String QUARANTINE_PREFIX = ".corrupt-";
    private static final Pattern VALID_KEY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,199}");

    private static final Set<PosixFilePermission> OWNER_ONLY_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
    private static final FileAttribute<?>[] NO_ATTRIBUTES = new FileAttribute<?>[0];
    private static final Set<StandardOpenOption> CREATE_NEW_FOR_WRITE =
            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);

    private final Path directory;
    /** Makes each new block file {@code 0600}; empty where the file system has no POSIX permissions. */
    private final FileAttribute<?>[] fileAttributes;
    private final boolean fsync;
    /** Bytes of complete blocks plus bytes reserved by writes in progress. */
    private final AtomicLong bytesStored = new AtomicLong();
    private final long maxBytes;
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
        this.directory = createOwnerOnlyDirectory(directory);
        this.fileAttributes = ownerOnlyFile(directory);
        warnIfOthersMayEnter(this.directory);
        this.fsync = fsync;
        this.maxBytes = maxBytes;
        for (int i = 0; i < keyLocks.length; i++) {
            keyLocks[i] = new Object();
        }
        long existing = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (Path file : files) {
                if (file.getFileName().toString().startsWith(TEMP_PREFIX)) {
                    Files.deleteIfExists(file);
                } else if (!file.getFileName().toString().startsWith(NodeIdentity.FILE_PREFIX)
                        && !file.getFileName().toString().startsWith(QUARANTINE_PREFIX)) {
                    existing += Files.size(file);
                }
            }
        }
        bytesStored.set(existing);
    }

    public Path directory() {
        return directory;
    }

    /**
     * Creates {@code directory} and its missing parents readable by their owner only ({@code
     * 0700}) where the file system has POSIX permissions, with its defaults elsewhere. An existing
     * directory is left as it is.
     */
    static Path createOwnerOnlyDirectory(Path directory) throws IOException {
        if (Files.isDirectory(directory) || !isPosix(directory)) {
            return Files.createDirectories(directory);
        }
        return Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIRECTORY));
    }

    /**
     * The attributes that create a file in {@code directory} readable by its owner only ({@code
     * 0600}); none where the file system has no POSIX permissions.
     */
    static FileAttribute<?>[] ownerOnlyFile(Path directory) {
        return isPosix(directory)
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE)}
                : NO_ATTRIBUTES;
    }

    private static boolean isPosix(Path path) {
        return path.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    /** Logs once, as the store opens, that a directory made before (or by hand) lets other users in. */
    private static void warnIfOthersMayEnter(Path directory) {
        if (!isPosix(directory)) {
            return;
        }
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(directory);
            if (!OWNER_ONLY_DIRECTORY.containsAll(permissions)) {
                LOG.warn("sr3 block store {} has permissions {}: users other than its owner may read checkpoint "
                        + "blocks in it. Restrict it with 'chmod -R go-rwx {}'.", directory,
                        PosixFilePermissions.toString(permissions), directory);
            }
        } catch (IOException e) {
            LOG.warn("Could not read the permissions of the sr3 block store {}: {}", directory, e.toString());
        }
    }

    /** Bytes on disk in complete block files, headers included. */
    public long bytesStored() {
        return bytesStored.get();
    }

    /**
     * Stores a block, replacing any block with the same key. Atomic: no torn block is ever visible.
     *
     * @throws StoreFullException if the block does not fit under the store's size limit; nothing
     *     was written then
     */
    public void put(String key, byte[] data) throws IOException {
        put(key, data, crc32c(data));
    }

    /**
     * Like {@link #put(String, byte[])} for data whose CRC32C the caller already holds (it was
     * computed where the block was filled, or verified as it arrived): it goes into the block's
     * header as it is, so a wrong one makes every later read fail verification.
     */
    public void put(String key, byte[] data, int crc32c) throws IOException {
        Path target = fileOf(key);
        synchronized (lockOf(key)) {
            putLocked(key, target, data, crc32c);
        }
    }

    private static int crc32c(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue();
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
                putLocked(key, target, replacement, crc32c(replacement));
            }
            return new Swap(true, current);
        }
    }

    private void putLocked(String key, Path target, byte[] data, int crc32c) throws IOException {
        long growth = HEADER_SIZE + (long) data.length - sizeOrZero(target);
        reserve(key, growth);
        try {
            write(key, target, data, crc32c);
        } catch (IOException | RuntimeException e) {
            bytesStored.addAndGet(-growth);
            throw e;
        }
    }

    /** Counts {@code growth} bytes as stored if they fit under the limit; shrinking always fits. */
    private void reserve(String key, long growth) throws StoreFullException {
        while (true) {
            long current = bytesStored.get();
            if (growth > 0 && current + growth > maxBytes) {
                throw new StoreFullException(key, growth, current, maxBytes, directory);
            }
            if (bytesStored.compareAndSet(current, current + growth)) {
                return;
            }
        }
    }

    private void write(String key, Path target, byte[] data, int crc32c) throws IOException {
        Path temp = directory.resolve(TEMP_PREFIX + UUID.randomUUID());
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE);
        header.putInt(MAGIC).put(VERSION).putLong(data.length).putInt(crc32c).flip();
        try (FileChannel channel = FileChannel.open(temp, CREATE_NEW_FOR_WRITE, fileAttributes)) {
            ByteBuffer body = ByteBuffer.wrap(data);
            while (header.hasRemaining() || body.hasRemaining()) {
                channel.write(new ByteBuffer[] {header, body});
            }
            if (fsync) {
                channel.force(true);
            }
        } catch (IOException e) {
            Files.deleteIfExists(temp);
            throw new IOException("Could not write block " + key + " to " + directory + ": " + e.getMessage(), e);
        }
        try {
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            Files.deleteIfExists(temp);
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
        Path file = fileOf(key);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            Header header = readHeader(channel);
            if (header.problem() != null) {
                throw new CorruptBlockException(key, directory, header.problem());
            }
            byte[] data = new byte[(int) header.length()];
            readFully(channel, ByteBuffer.wrap(data));
            CRC32C crc = new CRC32C();
            crc.update(data);
            if ((int) crc.getValue() != header.crc32c()) {
                throw new CorruptBlockException(key, directory, "CRC32C mismatch");
            }
            return new Block(data, header.crc32c());
        } catch (NoSuchFileException e) {
            throw new BlockNotFoundException(key, directory);
        }
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
        Path file = fileOf(key);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            Header header = readHeader(channel);
            if (header.problem() != null) {
                throw new CorruptBlockException(key, directory, header.problem());
            }
            if (header.length() != expectedLength || header.crc32c() != expectedCrc32c) {
                throw new CorruptBlockException(key, directory, String.format(
                        "holds %d bytes with CRC32C 0x%08x, expected %d bytes with CRC32C 0x%08x",
                        header.length(), header.crc32c(), expectedLength, expectedCrc32c));
            }
            target.clear().limit(expectedLength);
            readFully(channel, target);
            target.flip();
            CRC32C crc = new CRC32C();
            crc.update(target.duplicate());
            if ((int) crc.getValue() != header.crc32c()) {
                throw new CorruptBlockException(key, directory, "CRC32C mismatch");
            }
            return target;
        } catch (NoSuchFileException e) {
            throw new BlockNotFoundException(key, directory);
        }
    }

    /**
     * A block file's header as read, checked against the file's size.
     *
     * @param problem why the header cannot describe this file, or null if it does
     */
    private record Header(long length, int crc32c, @Nullable String problem) {}

    /** Reads the header from the start of {@code channel} and checks its magic, version and length. */
    private static Header readHeader(FileChannel channel) throws IOException {
        long fileSize = channel.size();
        if (fileSize < HEADER_SIZE) {
            return new Header(-1, 0, "file of " + fileSize + " bytes is shorter than the header");
        }
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE);
        readFully(channel, header);
        header.flip();
        int magic = header.getInt();
        byte version = header.get();
        long length = header.getLong();
        int crc = header.getInt();
        if (magic != MAGIC || version != VERSION) {
            return new Header(length, crc, String.format("bad header (magic 0x%08x, version %d)", magic, version));
        }
        if (length != fileSize - HEADER_SIZE) {
            return new Header(length, crc, "header says " + length + " bytes, file holds " + (fileSize - HEADER_SIZE));
        }
        return new Header(length, crc, null);
    }

    private static void readFully(FileChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                throw new java.io.EOFException("block file ended early");
            }
        }
    }

    /**
     * What a block's header says about it, compared with the content a manifest expects: read
     * from the first {@value #HEADER_SIZE} bytes and the file's size only, so a holder can answer
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
        Path file = fileOf(key);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            Header header = readHeader(channel);
            if (header.problem() != null) {
                return corrupt(header.problem());
            }
            if (header.length() != expectedLength || header.crc32c() != expectedCrc32c) {
                return corrupt(String.format("holds %d bytes with CRC32C 0x%08x, expected %d bytes with CRC32C 0x%08x",
                        header.length(), header.crc32c(), expectedLength, expectedCrc32c));
            }
            return Presence.INTACT_BLOCK;
        } catch (NoSuchFileException e) {
            return new Presence(Presence.State.MISSING, "not in " + directory);
        }
    }

    private static Presence corrupt(String why) {
        return new Presence(Presence.State.CORRUPT, why);
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
                bytesStored.addAndGet(-size);
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
            bytesStored.addAndGet(-size);
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
        bytesStored.set(0);
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
