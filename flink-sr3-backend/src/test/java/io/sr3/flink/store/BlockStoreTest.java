package io.sr3.flink.store;

import org.apache.flink.testutils.logging.LoggerAuditingExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.event.Level;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class BlockStoreTest {

    @TempDir Path dir;

    @RegisterExtension
    final LoggerAuditingExtension warnings = new LoggerAuditingExtension(BlockStore.class, Level.WARN);

    @Test
    void storesAndReadsBlocks() throws Exception {
        BlockStore store = new BlockStore(dir, true);
        store.put("b-1", new byte[] {1, 2, 3});
        store.put("b-2", new byte[0]);
        assertThat(store.get("b-1")).containsExactly(1, 2, 3);
        assertThat(store.get("b-2")).isEmpty();
        assertThat(store.keys("b-")).containsExactlyInAnyOrder("b-1", "b-2");
        assertThat(store.bytesStored()).isEqualTo(2L * BlockFileFormat.HEADER_SIZE + 3);
    }

    @Test
    void replacingAndDeletingKeepsSizeAccounting() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        store.put("b-1", new byte[100]);
        store.put("b-1", new byte[10]);
        assertThat(store.bytesStored()).isEqualTo(BlockFileFormat.HEADER_SIZE + 10);
        store.delete("b-1");
        store.delete("b-1");
        assertThat(store.bytesStored()).isZero();
        assertThat(store.contains("b-1")).isFalse();
    }

    @Test
    void compareAndPutReplacesOnlyTheExpectedValueAndReportsWhatItFound() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        byte[] first = {1};
        byte[] second = {2};
        assertThat(store.compareAndPut("m-1", null, first).swapped()).as("absent as expected").isTrue();
        BlockStore.Swap refused = store.compareAndPut("m-1", null, second);
        assertThat(refused.swapped()).as("a second create of the key").isFalse();
        assertThat(refused.found()).containsExactly(1);
        assertThat(store.compareAndPut("m-1", null, first).swapped()).as("a repeat of the stored value").isTrue();
        assertThat(store.compareAndPut("m-1", first, second).swapped()).isTrue();
        assertThat(store.get("m-1")).containsExactly(2);
        assertThat(store.compareAndPut("m-1", first, null).swapped()).as("a delete of a value it no longer holds")
                .isFalse();
        assertThat(store.compareAndPut("m-1", second, null).swapped()).isTrue();
        assertThat(store.contains("m-1")).isFalse();
        assertThat(store.bytesStored()).isZero();
    }

    @Test
    void aChecksumGivenWithTheDataIsStoredAsItIsAndReadBack() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        byte[] data = "given checksum".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int crc = io.sr3.flink.transport.Crc32c.of(data);
        store.put("b-right", data, crc);
        store.put("b-wrong", data, crc ^ 1);

        assertThat(store.read("b-right").crc32c()).isEqualTo(crc);
        assertThat(store.read("b-right").data()).isEqualTo(data);
        assertThatThrownBy(() -> store.read("b-wrong")).isInstanceOf(CorruptBlockException.class)
                .hasMessageContaining("CRC32C");
    }

    @Test
    void missingBlockIsReportedAsSuch() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        assertThatThrownBy(() -> store.get("b-404")).isInstanceOf(BlockNotFoundException.class).hasMessageContaining("b-404");
    }

    @Test
    void flippedBitIsDetected() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        store.put("b-1", new byte[] {1, 2, 3, 4});
        try (RandomAccessFile file = new RandomAccessFile(store.fileOf("b-1").toFile(), "rw")) {
            file.seek(BlockFileFormat.HEADER_SIZE + 2);
            file.write(99);
        }
        assertThatThrownBy(() -> store.get("b-1")).isInstanceOf(CorruptBlockException.class).hasMessageContaining("CRC32C");
    }

    @Test
    void intactBlockWithOtherContentThanExpectedIsRefused() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        byte[] data = {1, 2, 3, 4};
        store.put("b-1", data);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(data);
        assertThat(store.get("b-1", 4, (int) crc.getValue())).isEqualTo(data);
        assertThatThrownBy(() -> store.get("b-1", 4, (int) crc.getValue() + 1))
                .isInstanceOf(CorruptBlockException.class).hasMessageContaining("expected 4 bytes with CRC32C");
        assertThatThrownBy(() -> store.get("b-1", 5, (int) crc.getValue()))
                .isInstanceOf(CorruptBlockException.class).hasMessageContaining("holds 4 bytes");
    }

    @Test
    void truncatedBlockIsDetected() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        store.put("b-1", new byte[1000]);
        try (RandomAccessFile file = new RandomAccessFile(store.fileOf("b-1").toFile(), "rw")) {
            file.setLength(BlockFileFormat.HEADER_SIZE + 500);
        }
        assertThatThrownBy(() -> store.get("b-1")).isInstanceOf(CorruptBlockException.class).hasMessageContaining("holds 500");
        Files.write(store.fileOf("b-1"), new byte[3]);
        assertThatThrownBy(() -> store.get("b-1")).isInstanceOf(CorruptBlockException.class).hasMessageContaining("shorter than the header");
    }

    @Test
    void leftoverTemporaryFilesAreRemovedAndNeverListed() throws Exception {
        Files.write(dir.resolve(".tmp-crashed-writer"), new byte[10]);
        BlockStore store = new BlockStore(dir, false);
        assertThat(Files.exists(dir.resolve(".tmp-crashed-writer"))).isFalse();
        assertThat(store.keys("")).isEmpty();
    }

    @Test
    void keysThatCouldEscapeTheDirectoryAreRejected() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        assertThatThrownBy(() -> store.put("../evil", new byte[1])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.get("a/b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.get(".tmp-x")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aBlockOverTheSizeLimitIsRefusedBeforeAnythingIsWritten() throws Exception {
        BlockStore store = new BlockStore(dir, false, 2L * (BlockFileFormat.HEADER_SIZE + 100));
        store.put("b-1", new byte[100]);
        store.put("b-2", new byte[100]);
        assertThatThrownBy(() -> store.put("b-3", new byte[1]))
                .isInstanceOf(StoreFullException.class)
                .hasMessageContaining("b-3")
                .hasMessageContaining("sr3.store.max-size");
        assertThat(store.keys("")).containsExactlyInAnyOrder("b-1", "b-2");
        try (var files = Files.list(dir)) {
            assertThat(files.count()).as("no temporary file left behind").isEqualTo(2);
        }
        store.put("b-1", new byte[50]); // replacing with a smaller block always fits
        store.put("b-3", new byte[30]);
        assertThat(store.bytesStored()).isEqualTo(3L * BlockFileFormat.HEADER_SIZE + 180);
    }

    @Test
    void aNewStoreDirectoryAndItsBlocksAreReadableByTheirOwnerOnly() throws Exception {
        assumeTrue(posix(dir), "POSIX file permissions");
        Path storeDir = dir.resolve("new-parent").resolve("store");
        BlockStore store = new BlockStore(storeDir, false);
        store.put("b-1", new byte[] {1, 2, 3});
        store.compareAndPut("m-1", null, new byte[] {4});
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(storeDir))).isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(storeDir.getParent())))
                .as("a parent the store created").isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(storeDir.resolve("b-1"))))
                .isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(storeDir.resolve("m-1"))))
                .isEqualTo("rw-------");
        assertThat(warnings.getMessages()).isEmpty();
    }

    @Test
    void anExistingDirectoryKeepsItsPermissionsAndIsWarnedAboutOnce() throws Exception {
        assumeTrue(posix(dir), "POSIX file permissions");
        Path storeDir = Files.createDirectory(dir.resolve("shared"));
        Files.setPosixFilePermissions(storeDir, PosixFilePermissions.fromString("rwxr-x---"));
        // As a ring node opens its store: identity first, then blocks.
        try (NodeIdentity identity = NodeIdentity.open(storeDir)) {
            new BlockStore(storeDir, false).put("b-1", new byte[] {1});
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(storeDir))).isEqualTo("rwxr-x---");
        assertThat(warnings.getMessages()).singleElement().asString()
                .contains(storeDir.toString()).contains("rwxr-x---").contains("chmod");
    }

    @Test
    void presenceIsJudgedFromTheHeaderAndTheFileSizeAlone() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        byte[] data = {1, 2, 3, 4, 5};
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(data);
        int expected = (int) crc.getValue();
        store.put("b-1", data);
        assertThat(store.presence("b-1", 5, expected).state()).isEqualTo(BlockStore.Presence.State.INTACT);
        assertThat(store.presence("b-1", 5, expected + 1).detail()).contains("expected 5 bytes");
        assertThat(store.presence("b-1", 4, expected).state()).isEqualTo(BlockStore.Presence.State.CORRUPT);
        assertThat(store.presence("b-2", 5, expected).state()).isEqualTo(BlockStore.Presence.State.MISSING);

        try (RandomAccessFile file = new RandomAccessFile(dir.resolve("b-1").toFile(), "rw")) {
            file.setLength(BlockFileFormat.HEADER_SIZE + 3);
        }
        assertThat(store.presence("b-1", 5, expected)).satisfies(p -> {
            assertThat(p.state()).isEqualTo(BlockStore.Presence.State.CORRUPT);
            assertThat(p.detail()).isEqualTo("header says 5 bytes, file holds 3");
        });
        try (RandomAccessFile file = new RandomAccessFile(dir.resolve("b-1").toFile(), "rw")) {
            file.setLength(3);
        }
        assertThat(store.presence("b-1", 5, expected).detail()).contains("shorter than the header");
    }

    @Test
    void quarantineMovesOnlyADamagedBlockAsideAndItNeitherCountsNorListsAgain() throws Exception {
        BlockStore store = new BlockStore(dir, false);
        store.put("b-1", new byte[100]);
        store.put("b-2", new byte[100]);
        try (RandomAccessFile file = new RandomAccessFile(dir.resolve("b-1").toFile(), "rw")) {
            file.seek(BlockFileFormat.HEADER_SIZE + 50);
            file.write(7);
        }
        assertThat(store.quarantineIfCorrupt("b-2")).as("intact").isNull();
        assertThat(store.quarantineIfCorrupt("b-3")).as("absent").isNull();
        assertThat(store.quarantineIfCorrupt("b-1")).contains("CRC32C mismatch");

        assertThat(store.keys("")).containsExactly("b-2");
        assertThat(store.contains("b-1")).isFalse();
        assertThat(Files.exists(store.quarantined("b-1"))).isTrue();
        assertThat(store.bytesStored()).isEqualTo(BlockFileFormat.HEADER_SIZE + 100);
        assertThat(new BlockStore(dir, false).bytesStored()).as("reopened").isEqualTo(BlockFileFormat.HEADER_SIZE + 100);
        store.put("b-1", new byte[] {9});
        assertThat(store.get("b-1")).as("a later put starts afresh").containsExactly(9);
    }

    private static boolean posix(Path path) {
        return path.getFileSystem().supportedFileAttributeViews().contains("posix");
    }
}
