package io.sr3.flink.store;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.util.Set;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * Writes and reads the files of blocks in one store directory in the stored layout below, so
 * that {@link BlockStore} deals in keys, locks and sizes and never in bytes of a header.
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
 * <p>A write renames a complete temporary file into place; a read verifies magic, version,
 * length and checksum before it returns a byte. Holds no state that changes: {@link BlockStore}
 * serializes the changes of one key.
 */
@ThreadSafe
final class BlockFileFormat {

    static final int MAGIC = 0x53523342; // "SR3B"
    static final byte VERSION = 1;
    static final int HEADER_SIZE = 4 + 1 + 8 + 4;
    /** Names the temporary file of a write in progress; a crashed writer's are removed when the store opens. */
    static final String TEMP_PREFIX = ".tmp-";

    private static final Set<StandardOpenOption> CREATE_NEW_FOR_WRITE =
            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);

    private final Path directory;
    /** Makes each new block file {@code 0600}; empty where the file system has no POSIX permissions. */
    private final FileAttribute<?>[] fileAttributes;
    private final boolean fsync;

    /** @param fsync whether each block is forced to disk before {@link #write} returns */
    BlockFileFormat(Path directory, FileAttribute<?>[] fileAttributes, boolean fsync) {
        this.directory = directory;
        this.fileAttributes = fileAttributes;
        this.fsync = fsync;
    }

    static int crc32c(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue();
    }

    /** Writes {@code data} (position to limit; a direct buffer goes to the file uncopied, in {@link SlicedFileWrites slices}) with its header to a temporary file and renames it to {@code target} atomically. */
    void write(String key, Path target, ByteBuffer data, int crc32c) throws IOException {
        Path temp = directory.resolve(TEMP_PREFIX + UUID.randomUUID());
        ByteBuffer header = ByteBuffer.allocate(HEADER_SIZE);
        header.putInt(MAGIC).put(VERSION).putLong(data.remaining()).putInt(crc32c).flip();
        try (FileChannel channel = FileChannel.open(temp, CREATE_NEW_FOR_WRITE, fileAttributes)) {
            while (header.hasRemaining()) {
                channel.write(header);
            }
            SlicedFileWrites.write(channel, data);
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

    /**
     * Reads the header and data of the block in {@code file} straight into place (no copy of the
     * whole file) and verifies them.
     *
     * @throws BlockNotFoundException if there is no such file
     * @throws CorruptBlockException if the stored bytes fail verification
     */
    BlockStore.Block read(String key, Path file) throws IOException {
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
            return new BlockStore.Block(data, header.crc32c());
        } catch (NoSuchFileException e) {
            throw new BlockNotFoundException(key, directory);
        }
    }

    /**
     * Reads the block in {@code file} into {@code target} (large enough, checked by the caller)
     * if its header names the expected content, and verifies the data there.
     *
     * @throws BlockNotFoundException if there is no such file
     * @throws CorruptBlockException if the stored bytes fail verification or are other content
     */
    ByteBuffer readInto(String key, Path file, int expectedLength, int expectedCrc32c, ByteBuffer target)
            throws IOException {
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

    /** Checks the header and size of the block in {@code file} against the expected content; reads no data. */
    BlockStore.Presence presence(Path file, int expectedLength, int expectedCrc32c) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            Header header = readHeader(channel);
            if (header.problem() != null) {
                return corrupt(header.problem());
            }
            if (header.length() != expectedLength || header.crc32c() != expectedCrc32c) {
                return corrupt(String.format("holds %d bytes with CRC32C 0x%08x, expected %d bytes with CRC32C 0x%08x",
                        header.length(), header.crc32c(), expectedLength, expectedCrc32c));
            }
            return BlockStore.Presence.INTACT_BLOCK;
        } catch (NoSuchFileException e) {
            return new BlockStore.Presence(BlockStore.Presence.State.MISSING, "not in " + directory);
        }
    }

    private static BlockStore.Presence corrupt(String why) {
        return new BlockStore.Presence(BlockStore.Presence.State.CORRUPT, why);
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
}
