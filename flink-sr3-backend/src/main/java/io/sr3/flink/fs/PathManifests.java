package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The manifests of the paths of one namespace as {@link Sr3FileSystem} reads them from the ring:
 * a path's versions (the root's made up, never stored), its live manifest, a directory's
 * children, and the error that names a file none of the nodes holds.
 */
@ThreadSafe
final class PathManifests {

    private final NamespacePaths paths;

    PathManifests(NamespacePaths paths) {
        this.paths = paths;
    }

    /**
     * The file is certainly on none of the nodes (unreachable ones would have made the read fail
     * as unavailable). When it belongs to a checkpoint being restored, its manifest was lost with
     * more disks than the replication factor tolerates: say so, because "does not exist" alone
     * sends people looking for a typo.
     */
    private FileNotFoundException notFound(RingNode node, String key) {
        return new FileNotFoundException("File " + paths.display(key) + " does not exist on the sr3 ring: enough of its "
                + node.membership().members().size() + " storage nodes answered that none holds it, or it was deleted. "
                + "If it belongs to a completed checkpoint, more disks were lost than sr3.ring.replication-factor ("
                + node.config().replicationFactor() + ") tolerates; restore from a savepoint.");
    }

    /** The manifest of {@code key}, or the "lost or never written" error that names it. */
    Manifest existing(RingNode node, String key) throws IOException {
        Manifest manifest = manifest(node, key);
        if (manifest == null) {
            throw notFound(node, key);
        }
        return manifest;
    }

    /** The live manifest of {@code key}, or null if it was never written or is deleted. */
    @Nullable
    Manifest manifest(RingNode node, String key) throws IOException {
        return live(versions(node, key));
    }

    /** Every version the ring holds of {@code key}, tombstones included; null if it never existed. */
    @Nullable
    ManifestStore.Versions versions(RingNode node, String key) throws IOException {
        if (key.equals(NamespaceKeys.ROOT)) {
            Manifest root = Manifest.directory(NamespaceKeys.ROOT, 0, 0);
            return new ManifestStore.Versions(root, root.encode(), List.of());
        }
        return new ManifestStore(node).read(NamespaceKeys.manifestKey(key), "manifest of " + paths.display(key));
    }

    /** {@link #versions} of a path other than the root without waiting; completes with null if it never existed. */
    CompletableFuture<ManifestStore.Versions> versionsAsync(RingNode node, String key) {
        return new ManifestStore(node).readAsync(NamespaceKeys.manifestKey(key), "manifest of " + paths.display(key));
    }

    /**
     * Fails if a file may not be created at {@code key} over what the ring holds there: a
     * directory, or (when {@code exclusive}, i.e. NO_OVERWRITE) a file.
     */
    void checkCreatable(@Nullable ManifestStore.Versions versions, String key, boolean exclusive) throws IOException {
        Manifest existing = live(versions);
        if (existing == null) {
            return;
        }
        if (existing.directory()) {
            throw new IOException("Cannot create " + paths.display(key) + ": a directory exists there");
        }
        if (exclusive) {
            throw new FileAlreadyExistsException(paths.display(key), null, "file exists and the write mode is NO_OVERWRITE");
        }
    }

    @Nullable
    static Manifest live(@Nullable ManifestStore.Versions versions) {
        return versions == null || versions.newest().isTombstone() ? null : versions.newest();
    }

    /** The newest generation of a path, tombstones included; 0 if it never existed. */
    static long generation(@Nullable ManifestStore.Versions versions) {
        return versions == null ? 0 : versions.newest().generation();
    }

    /** The live children of {@code directory} on any live node. */
    List<ManifestStore.Versions> children(RingNode node, String directory) throws IOException {
        List<ManifestStore.Versions> children = new ArrayList<>();
        ManifestStore manifests = new ManifestStore(node);
        for (String key : node.storage().listEverywhere(NamespaceKeys.childrenPrefix(directory)).keySet()) {
            ManifestStore.Versions child = manifests.read(key, "a manifest under " + paths.display(directory));
            if (child != null && !child.newest().isTombstone()
                    && NamespaceKeys.parent(child.newest().path()).equals(directory)) {
                children.add(child);
            }
        }
        return children;
    }
}
