package io.sr3.flink.store;

import io.sr3.flink.transport.Crc32c;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link BlockStore#readInto}: a block read into a caller's (direct) buffer, verified like {@link BlockStore#get}. */
class BlockStoreReadIntoTest {

    @TempDir Path dir;

    @Test
    void readsTheBlockIntoTheBufferFromItsStartAndLeavesItBetweenZeroAndTheLength() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        byte[] data = random(100_000);
        store.put("b-1", data);
        ByteBuffer buffer = ByteBuffer.allocateDirect(128 * 1024);
        buffer.position(77); // a reused buffer's leftovers do not matter

        ByteBuffer read = store.readInto("b-1", data.length, Crc32c.of(data), buffer);

        assertThat(read).isSameAs(buffer);
        assertThat(read.position()).isZero();
        assertThat(read.limit()).isEqualTo(data.length);
        byte[] back = new byte[data.length];
        read.duplicate().get(back);
        assertThat(back).isEqualTo(data);
    }

    @Test
    void aFlippedBitInTheDataIsRefused() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        byte[] data = random(4096);
        store.put("b-1", data);
        try (RandomAccessFile file = new RandomAccessFile(store.fileOf("b-1").toFile(), "rw")) {
            file.seek(BlockFileFormat.HEADER_SIZE + 1000);
            file.write(data[1000] ^ 0x10);
        }
        assertThatThrownBy(() -> store.readInto("b-1", data.length, Crc32c.of(data), ByteBuffer.allocateDirect(4096)))
                .isInstanceOf(CorruptBlockException.class).hasMessageContaining("CRC32C mismatch");
    }

    @Test
    void anIntactBlockWithOtherContentThanExpectedIsRefusedBeforeItsDataIsRead() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        byte[] data = random(4096);
        store.put("b-1", data);
        assertThatThrownBy(() -> store.readInto("b-1", data.length, Crc32c.of(data) ^ 1, ByteBuffer.allocateDirect(4096)))
                .isInstanceOf(CorruptBlockException.class).hasMessageContaining("holds 4096 bytes with CRC32C");
        assertThatThrownBy(() -> store.readInto("b-1", 4000, Crc32c.of(data), ByteBuffer.allocateDirect(4096)))
                .isInstanceOf(CorruptBlockException.class).hasMessageContaining("expected 4000 bytes");
    }

    @Test
    void aBufferTooSmallForTheExpectedBlockAndAMissingBlockAreClearErrors() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        byte[] data = random(4096);
        store.put("b-1", data);
        assertThatThrownBy(() -> store.readInto("b-1", data.length, Crc32c.of(data), ByteBuffer.allocateDirect(4095)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4095 bytes cannot hold block b-1 of 4096");
        assertThatThrownBy(() -> store.readInto("b-missing", 10, 0, ByteBuffer.allocateDirect(10)))
                .isInstanceOf(BlockNotFoundException.class);
    }

    private static byte[] random(int size) {
        byte[] data = new byte[size];
        new Random(size).nextBytes(data);
        return data;
    }
}
