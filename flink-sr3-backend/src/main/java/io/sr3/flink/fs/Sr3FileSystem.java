package io.sr3.flink.fs;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.util.WrappingProxy;
import org.apache.flink.util.WrappingProxyUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The ring as a Flink {@link FileSystem} under the {@code sr3://} scheme.
 *
 * <p>Files are cut into blocks replicated through the ring; a small manifest per path says which
 * blocks make the file and who holds them. A file appears when its output stream closes. Paths
 * are namespaced by the URI authority ({@code sr3://a/x} and {@code sr3://b/x} are different
 * files). Directories are manifests too; {@link #create} creates missing parents, like a local
 * file system, and remembers the directories it made so that the many files of one checkpoint
 * directory do not re-check their parents. How RocksDB's restore reaches {@link #copyToLocalFiles}
 * depends on the Flink line: see {@link VersionedFileSystem}.
 */
@ThreadSafe
public final class Sr3FileSystem extends VersionedFileSystem {

    private static final Logger LOG = LoggerFactory.getLogger(Sr3FileSystem.class);

    private final URI uri;
    private final NamespacePaths paths;
    private final PathManifests pathManifests;
    private final Set<String> knownDirectories = ConcurrentHashMap.newKeySet();

    Sr3FileSystem(URI fsUri) {
        this.paths = new NamespacePaths(fsUri);
        this.uri = paths.uri();
        this.pathManifests = new PathManifests(paths);
    }

    /**
     * The file system under Flink's wrappers (the safety net of task threads, a plugin's class
     * loader fix): an {@code Sr3FileSystem} if {@code fs} is one of this class loader's.
     */
    @SuppressWarnings("unchecked")
    public static FileSystem unwrap(FileSystem fs) {
        return fs instanceof WrappingProxy<?> proxy ? WrappingProxyUtil.stripProxy((WrappingProxy<FileSystem>) proxy) : fs;
    }

    @Override
    public URI getUri() {
        return uri;
    }

    @Override
    public Path getWorkingDirectory() {
        return new Path(uri);
    }

    @Override
    public Path getHomeDirectory() {
        return new Path(uri);
    }

    @Override
    public boolean isDistributedFS() {
        return true;
    }

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
        String key = paths.normalize(path);
        RingNode node = node();
        Manifest manifest = pathManifests.existing(node, key);
        return status(manifest, node);
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len) throws IOException {
        String key = paths.normalize(file.getPath());
        Manifest manifest = pathManifests.manifest(node(), key);
        if (manifest == null || manifest.directory()) {
            return new BlockLocation[0];
        }
        List<BlockLocation> locations = new ArrayList<>();
        long offset = 0;
        for (Manifest.BlockRef block : manifest.blocks()) {
            if (offset + block.length() > start && offset < start + len) {
                locations.add(new Sr3BlockLocation(block, offset));
            }
            offset += block.length();
        }
        return locations.toArray(new BlockLocation[0]);
    }

    /**
     * The blocks of a file as its newest manifest records them, holders at their current
     * addresses; nothing is read from the holders.
     *
     * @throws FileNotFoundException if the file does not exist
     * @throws IOException if the path is a directory, or its manifest cannot be read
     */
    public List<FileBlock> fileBlocks(Path path) throws IOException {
        String key = paths.normalize(path);
        Manifest manifest = pathManifests.existing(node(), key);
        if (manifest.directory()) {
            throw new IOException(paths.display(key) + " is a directory, not a file");
        }
        List<FileBlock> blocks = new ArrayList<>(manifest.blocks().size());
        long offset = 0;
        for (Manifest.BlockRef block : manifest.blocks()) {
            blocks.add(new FileBlock(block.key(), offset, block.length(), block.crc32c(), block.holders()));
            offset += block.length();
        }
        return blocks;
    }

    @Override
    public FSDataInputStream open(Path path, int bufferSize) throws IOException {
        return open(path);
    }

    @Override
    public FSDataInputStream open(Path path) throws IOException {
        String key = paths.normalize(path);
        RingNode node = node();
        Manifest manifest = pathManifests.existing(node, key);
        if (manifest.directory()) {
            throw new IOException("Cannot open " + paths.display(key) + ": it is a directory");
        }
        return new Sr3InputStream(node.storage(), manifest, paths.display(key), PrefetchedBlocks.of(node));
    }

    /** Sources on the ring, destinations on the local disk (a bare file name counts as local). */
    static boolean copiesToLocal(Path source, Path destination) {
        String destinationScheme = destination.toUri().getScheme();
        return Sr3FileSystemFactory.SCHEME.equals(source.toUri().getScheme())
                && (destinationScheme == null || "file".equals(destinationScheme));
    }

    /**
     * Restores the sources to the local destinations through one restore plan (see
     * {@code sr3.restore.strategy}), verifying every block, and logs one line for the restore.
     *
     * @param sources {@code sr3://} files, each accepted by {@link #copiesToLocal}
     * @param destinations local files, one per source, in the same order
     * @param abortRegistrar where the restore registers what closing aborts it
     */
    void copyToLocalFiles(List<Path> sources, List<java.nio.file.Path> destinations,
            FileRestore.CloseableRegistrar abortRegistrar) throws IOException {
        if (sources.isEmpty()) {
            return;
        }
        RingNode node = node();
        List<FileRestore.Source> restoreSources = ParallelLookup.of(sources, source -> source(node, source));
        java.nio.file.Path first = destinations.get(0);
        java.nio.file.Path instance = first.getParent() != null && first.getParent().getParent() != null
                ? first.getParent().getParent().getFileName() : first;
        String description = sources.size() + " file(s) into " + instance;
        FileRestore.toLocalFiles(node, description, restoreSources, destinations, abortRegistrar);
    }

    /**
     * Brings the given files into this process's memory through one restore plan, so that the
     * streams Flink opens on them next read no block over the network. Skipped, with a log line,
     * when they are larger than {@code sr3.restore.prefetch-max-size}.
     *
     * @param description who restores, for the log line (operator and subtask)
     * @return whether the files were prefetched
     */
    public boolean prefetch(List<Path> paths, String description) throws IOException {
        RingNode node = node();
        List<FileRestore.Source> sources = ParallelLookup.of(paths, path -> source(node, path));
        long total = 0;
        for (FileRestore.Source source : sources) {
            total += source.manifest().length();
        }
        long limit = node.config().restore().prefetchMaxBytes();
        PrefetchedBlocks prefetched = PrefetchedBlocks.of(node);
        if (total + prefetched.bytes() > limit) {
            LOG.info("sr3 restore of {}: {} bytes in {} file(s) exceed sr3.restore.prefetch-max-size ({} bytes with {} "
                    + "already prefetched); Flink reads them block by block instead", description, total, paths.size(),
                    limit, prefetched.bytes());
            return false;
        }
        FileRestore.toMemory(node, description, sources, prefetched);
        return true;
    }

    /** Bytes prefetched through this process's node and not read yet. */
    static long prefetchedBytes() throws IOException {
        return PrefetchedBlocks.of(node()).bytes();
    }

    private FileRestore.Source source(RingNode node, Path path) throws IOException {
        String key = paths.normalize(path);
        Manifest manifest = pathManifests.existing(node, key);
        if (manifest.directory()) {
            throw new IOException("Cannot restore " + paths.display(key) + ": it is a directory");
        }
        return new FileRestore.Source(manifest, paths.display(key));
    }

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
        String key = paths.normalize(path);
        RingNode node = node();
        Manifest manifest = pathManifests.manifest(node, key);
        if (manifest == null) {
            throw new FileNotFoundException("Directory " + paths.display(key) + " does not exist on the sr3 ring");
        }
        if (!manifest.directory()) {
            return new FileStatus[] {status(manifest, node)};
        }
        List<FileStatus> children = new ArrayList<>();
        for (ManifestStore.Versions child : pathManifests.children(node, key)) {
            children.add(status(child.newest(), node));
        }
        return children.toArray(new FileStatus[0]);
    }

    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
        String key = paths.normalize(path);
        RingNode node = node();
        if (key.equals(NamespaceKeys.ROOT)) {
            throw new IOException("Cannot delete the root of " + uri);
        }
        ManifestStore.Versions versions = pathManifests.versions(node, key);
        if (versions == null || versions.newest().isTombstone()) {
            return false;
        }
        delete(node, versions, recursive);
        return true;
    }

    private void delete(RingNode node, ManifestStore.Versions versions, boolean recursive) throws IOException {
        Manifest manifest = versions.newest();
        if (manifest.directory()) {
            List<ManifestStore.Versions> children = pathManifests.children(node, manifest.path());
            if (!children.isEmpty() && !recursive) {
                throw new IOException("Directory " + paths.display(manifest.path()) + " is not empty (" + children.size()
                        + " entries); delete it recursively");
            }
            for (ManifestStore.Versions child : children) {
                delete(node, child, true);
            }
            knownDirectories.remove(manifest.path());
        }
        // The tombstone goes first: a file must never be visible with blocks already missing.
        new ManifestStore(node).delete(manifest, versions.holders());
        for (Manifest.BlockRef block : manifest.blocks()) {
            node.storage().deleteOn(block.key(), block.holders());
        }
    }

    @Override
    public boolean mkdirs(Path path) throws IOException {
        mkdirs(node(), paths.normalize(path));
        return true;
    }

    private void mkdirs(RingNode node, String directory) throws IOException {
        RingStorage.await(mkdirsAsync(node, directory));
    }

    /**
     * Creates {@code directory} and its missing parents, each once its parent exists, without
     * waiting: completes on a network thread once every one exists (a directory this file system
     * created or found is not asked about again).
     */
    private CompletableFuture<Void> mkdirsAsync(RingNode node, String directory) {
        if (directory.equals(NamespaceKeys.ROOT) || knownDirectories.contains(directory)) {
            return CompletableFuture.completedFuture(null);
        }
        return mkdirsAsync(node, NamespaceKeys.parent(directory))
                .thenCompose(parentExists -> pathManifests.versionsAsync(node, directory))
                .thenCompose(versions -> {
                    Manifest existing = PathManifests.live(versions);
                    if (existing != null && !existing.directory()) {
                        return CompletableFuture.failedFuture(new FileAlreadyExistsException(paths.display(directory),
                                null, "a file exists where a directory is needed"));
                    }
                    if (existing != null) {
                        return CompletableFuture.completedFuture(null);
                    }
                    long now = System.currentTimeMillis();
                    Manifest created = Manifest.directory(directory,
                            Manifest.nextGeneration(PathManifests.generation(versions), now), now);
                    return new ManifestStore(node).writeAsync(created);
                })
                .thenRun(() -> knownDirectories.add(directory));
    }

    @Override
    public FSDataOutputStream create(Path path, WriteMode overwrite) throws IOException {
        return create(path, overwrite, Manifest.RING_DEFAULT);
    }

    /**
     * {@link #create(Path, WriteMode)} of a file whose blocks get {@code copies} replicas instead
     * of {@code sr3.ring.replication-factor} (as many as the ring has, never fewer than the write
     * quorum); repair keeps the file at that count. 0 means the replication factor.
     */
    public FSDataOutputStream create(Path path, WriteMode overwrite, int copies) throws IOException {
        if (copies < Manifest.RING_DEFAULT || copies > Manifest.MAX_COPIES) {
            throw new IllegalArgumentException("copies must be 1.." + Manifest.MAX_COPIES + ", or 0 for the replication "
                    + "factor; was " + copies + " for " + path);
        }
        String key = paths.normalize(path);
        if (key.equals(NamespaceKeys.ROOT)) {
            throw new IOException("Cannot create a file at the root of " + uri);
        }
        RingNode node = node();
        boolean exclusive = overwrite == WriteMode.NO_OVERWRITE;
        if (exclusive) {
            // A new file (Flink's checkpoint files have unique names): the lookup of the path asks
            // every member, so it runs while the stream is written, as does the creation (or
            // finding) of its parent directories; close() waits for both before it publishes.
            CompletableFuture<ManifestStore.Versions> lookup = pathManifests.versionsAsync(node, key)
                    .thenCombine(mkdirsAsync(node, NamespaceKeys.parent(key)), (versions, parentExists) -> versions);
            return new Sr3OutputStream(node, key, paths.display(key), lookup, pathManifests, true, copies);
        }
        ManifestStore.Versions versions = pathManifests.versions(node, key);
        pathManifests.checkCreatable(versions, key, false);
        mkdirs(node, NamespaceKeys.parent(key));
        return new Sr3OutputStream(node, key, paths.display(key), CompletableFuture.completedFuture(versions),
                pathManifests, false, copies);
    }

    /** Renames by re-pointing manifests; blocks do not move. */
    @Override
    public boolean rename(Path source, Path destination) throws IOException {
        String from = paths.normalize(source);
        String to = paths.normalize(destination);
        RingNode node = node();
        ManifestStore.Versions versions = pathManifests.versions(node, from);
        if (PathManifests.live(versions) == null || PathManifests.live(pathManifests.versions(node, to)) != null || to.startsWith(from + "/")) {
            return false;
        }
        mkdirs(node, NamespaceKeys.parent(to));
        rename(node, versions, to);
        return true;
    }

    private void rename(RingNode node, ManifestStore.Versions source, String to) throws IOException {
        Manifest manifest = source.newest();
        ManifestStore manifests = new ManifestStore(node);
        long generation = Manifest.nextGeneration(PathManifests.generation(pathManifests.versions(node, to)), System.currentTimeMillis());
        manifests.write(manifest.withPath(to, generation));
        if (manifest.directory()) {
            knownDirectories.remove(manifest.path());
            for (ManifestStore.Versions child : pathManifests.children(node, manifest.path())) {
                rename(node, child, to + child.newest().path().substring(manifest.path().length()));
            }
        }
        manifests.delete(manifest, source.holders());
    }

    // ------------------------------------------------------------------ helpers

    /** This process's ring node (see {@link LocalRing}), started on first use. */
    static RingNode node() throws IOException {
        return LocalRing.current();
    }

    private FileStatus status(Manifest manifest, RingNode node) {
        short replication = (short) (manifest.directory() ? 0 : manifest.copiesOr(node.config().replicationFactor()));
        return new Sr3FileStatus(manifest, new Path(paths.display(manifest.path())), replication);
    }
}
