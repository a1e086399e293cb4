package io.sr3.flink.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** A store directory keeps its node id across restarts, belongs to one running node, and a damaged id is refused. */
class NodeIdentityTest {

    @TempDir Path dir;

    @Test
    void theIdSurvivesARestartAndANewStoreGetsANewOne(@TempDir Path other) throws IOException {
        String first;
        try (NodeIdentity identity = NodeIdentity.open(dir)) {
            first = identity.nodeId();
        }
        try (NodeIdentity again = NodeIdentity.open(dir); NodeIdentity elsewhere = NodeIdentity.open(other)) {
            assertThat(again.nodeId()).isEqualTo(first).matches("n[0-9a-f]{16}");
            assertThat(elsewhere.nodeId()).isNotEqualTo(first);
        }
    }

    @Test
    void aDirectoryInUseIsRefused() throws IOException {
        try (NodeIdentity running = NodeIdentity.open(dir)) {
            assertThatThrownBy(() -> NodeIdentity.open(dir))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(dir.toString())
                    .hasMessageContaining("in use by another ring node");
        }
    }

    @Test
    void aDamagedIdFileIsRefusedNotReplaced() throws IOException {
        Files.writeString(dir.resolve(NodeIdentity.ID_FILE), "garbage");
        assertThatThrownBy(() -> NodeIdentity.open(dir))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("is damaged");
        assertThat(Files.readString(dir.resolve(NodeIdentity.ID_FILE))).isEqualTo("garbage");
        try (NodeIdentity afterFailure = NodeIdentity.open(dir.resolve("fresh"))) {
            assertThat(afterFailure.nodeId()).isNotBlank();
        }
    }

    @Test
    void aStoreOfAnotherClusterIsRefused() throws IOException {
        String id;
        try (NodeIdentity first = NodeIdentity.open(dir, "prod-eu")) {
            id = first.nodeId();
        }
        try (NodeIdentity same = NodeIdentity.open(dir, "prod-eu")) {
            assertThat(same.nodeId()).isEqualTo(id);
        }
        try (NodeIdentity unnamed = NodeIdentity.open(dir)) {
            assertThat(unnamed.nodeId()).as("a node of no named cluster is not checked").isEqualTo(id);
        }
        assertThatThrownBy(() -> NodeIdentity.open(dir, "staging"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("belongs to cluster 'prod-eu'")
                .hasMessageContaining("'staging'");
    }

    @Test
    void theBlockStoreDoesNotListTheIdentityFiles() throws IOException {
        try (NodeIdentity identity = NodeIdentity.open(dir)) {
            BlockStore store = new BlockStore(dir, false);
            store.put("b-1", new byte[] {1});
            assertThat(store.keys("")).containsExactly("b-1");
            assertThat(store.bytesStored()).isEqualTo(BlockFileFormat.HEADER_SIZE + 1L);
        }
    }

    @Test
    void theIdentityFilesAreReadableByTheirOwnerOnly() throws IOException {
        assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"), "POSIX file permissions");
        Path store = dir.resolve("store");
        try (NodeIdentity identity = NodeIdentity.open(store)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(store))).isEqualTo("rwx------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(store.resolve(NodeIdentity.ID_FILE))))
                    .isEqualTo("rw-------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(store.resolve(NodeIdentity.LOCK_FILE))))
                    .isEqualTo("rw-------");
        }
    }
}
