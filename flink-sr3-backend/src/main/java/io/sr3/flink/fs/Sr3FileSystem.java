package io.sr3.flink.fs;

import io.sr3.flink.node.LocalRing;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
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

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
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
    private final String namespace;
    private final Set<String> knownDirectories = ConcurrentHashMap.newKeySet();

    Sr3FileSystem(URI fsUri) {
        String authority = fsUri.getAuthority();
        this.namespace = authority == null ? "" : authority;
        this.uri = URI.create(Sr3FileSystemFactory.SCHEME + "://" + namespace + "/");
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
        String key = normalize(path);
        RingNode node = node();
        Manifest manifest = existing(node, key);
        return status(manifest, node);
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len) throws IOException {
        String key = normalize(file.getPath());
        Manifest manifest = manifest(node(), key);
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
        String key = normalize(path);
        Manifest manifest = existing(node(), key);
        if (manifest.directory()) {
            throw new IOException(display(key) + " is a directory, not a file");
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
        String key = normalize(path);
        RingNode node = node();
        Manifest manifest = existing(node, key);
        if (manifest.directory()) {
            throw new IOException("Cannot open " + display(key) + ": it is a directory");
        }
        return new Sr3InputStream(node.storage(), manifest, display(key), PrefetchedBlocks.of(node));
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
        String key = normalize(path);
        Manifest manifest = existing(node, key);
        if (manifest.directory()) {
            throw new IOException("Cannot restore " + display(key) + ": it is a directory");
        }
        return new FileRestore.Source(manifest, display(key));
    }

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
        String key = normalize(path);
        RingNode node = node();
        Manifest manifest = manifest(node, key);
        if (manifest == null) {
            throw new FileNotFoundException("Directory " + display(key) + " does not exist on the sr3 ring");
        }
        if (!manifest.directory()) {
            return new FileStatus[] {status(manifest, node)};
        }
        List<FileStatus> children = new ArrayList<>();
        for (ManifestStore.Versions child : children(node, key)) {
            children.add(status(child.newest(), node));
        }
        return children.toArray(new FileStatus[0]);
    }

    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
        String key = normalize(path);
        RingNode node = node();
        if (key.equals(NamespaceKeys.ROOT)) {
            throw new IOException("Cannot delete the root of " + uri);
        }
        ManifestStore.Versions versions = versions(node, key);
        if (versions == null || versions.newest().isTombstone()) {
            return false;
        }
        delete(node, versions, recursive);
        return true;
    }

    private void delete(RingNode node, ManifestStore.Versions versions, boolean recursive) throws IOException {
        Manifest manifest = versions.newest();
        if (manifest.directory()) {
            List<ManifestStore.Versions> children = children(node, manifest.path());
            if (!children.isEmpty() && !recursive) {
                throw new IOException("Directory " + display(manifest.path()) + " is not empty (" + children.size()
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
        mkdirs(node(), normalize(path));
        return true;
    }

    private void mkdirs(RingNode node, String directory) throws IOException {
        if (directory.equals(NamespaceKeys.ROOT) || knownDirectories.contains(directory)) {
            return;
        }
        mkdirs(node, NamespaceKeys.parent(directory));
        ManifestStore.Versions versions = versions(node, directory);
        Manifest existing = live(versions);
        if (existing != null && !existing.directory()) {
            throw new FileAlreadyExistsException(display(directory), null, "a file exists where a directory is needed");
        }
        if (existing == null) {
            long now = System.currentTimeMillis();
            new ManifestStore(node).write(Manifest.directory(directory,
                    Manifest.nextGeneration(generation(versions), now), now));
        }
        knownDirectories.add(directory);
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
        String key = normalize(path);
        if (key.equals(NamespaceKeys.ROOT)) {
            throw new IOException("Cannot create a file at the root of " + uri);
        }
        RingNode node = node();
        ManifestStore.Versions versions = versions(node, key);
        Manifest existing = live(versions);
        if (existing != null) {
            if (existing.directory()) {
                throw new IOException("Cannot create " + display(key) + ": a directory exists there");
            }
            if (overwrite == WriteMode.NO_OVERWRITE) {
                throw new FileAlreadyExistsException(display(key), null, "file exists and the write mode is NO_OVERWRITE");
            }
        }
        mkdirs(node, NamespaceKeys.parent(key));
        return new Sr3OutputStream(node, key, display(key), versions, overwrite == WriteMode.NO_OVERWRITE, copies);
    }

    /** Renames by re-pointing manifests; blocks do not move. */
    @Override
    public boolean rename(Path source, Path destination) throws IOException {
        String from = normalize(source);
        String to = normalize(destination);
        RingNode node = node();
        ManifestStore.Versions versions = versions(node, from);
        if (live(versions) == null || live(versions(node, to)) != null || to.startsWith(from + "/")) {
            return false;
        }
        mkdirs(node, NamespaceKeys.parent(to));
        rename(node, versions, to);
        return true;
    }

    private void rename(RingNode node, ManifestStore.Versions source, String to) throws IOException {
        Manifest manifest = source.newest();
        ManifestStore manifests = new ManifestStore(node);
        long generation = Manifest.nextGeneration(generation(versions(node, to)), System.currentTimeMillis());
        manifests.write(manifest.withPath(to, generation));
        if (manifest.directory()) {
            knownDirectories.remove(manifest.path());
            for (ManifestStore.Versions child : children(node, manifest.path())) {
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

    /**
     * The file is certainly on none of the nodes (unreachable ones would have made the read fail
     * as unavailable). When it belongs to a checkpoint being restored, its manifest was lost with
     * more disks than the replication factor tolerates: say so, because "does not exist" alone
     * sends people looking for a typo.
     */
    private FileNotFoundException notFound(RingNode node, String key) {
        return new FileNotFoundException("File " + display(key) + " does not exist on the sr3 ring: enough of its "
                + node.membership().members().size() + " storage nodes answered that none holds it, or it was deleted. "
                + "If it belongs to a completed checkpoint, more disks were lost than sr3.ring.replication-factor ("
                + node.config().replicationFactor() + ") tolerates; restore from a savepoint.");
    }

    /** The manifest of {@code key}, or the "lost or never written" error that names it. */
    private Manifest existing(RingNode node, String key) throws IOException {
        Manifest manifest = manifest(node, key);
        if (manifest == null) {
            throw notFound(node, key);
        }
        return manifest;
    }

    /** The live manifest of {@code key}, or null if it was never written or is deleted. */
    @Nullable
    private Manifest manifest(RingNode node, String key) throws IOException {
        return live(versions(node, key));
    }

    /** Every version the ring holds of {@code key}, tombstones included; null if it never existed. */
    @Nullable
    private ManifestStore.Versions versions(RingNode node, String key) throws IOException {
        if (key.equals(NamespaceKeys.ROOT)) {
            Manifest root = Manifest.directory(NamespaceKeys.ROOT, 0, 0);
            return new ManifestStore.Versions(root, root.encode(), List.of());
        }
        return new ManifestStore(node).read(NamespaceKeys.manifestKey(key), "manifest of " + display(key));
    }

    @Nullable
    private static Manifest live(@Nullable ManifestStore.Versions versions) {
        return versions == null || versions.newest().isTombstone() ? null : versions.newest();
    }

    /** The newest generation of a path, tombstones included; 0 if it never existed. */
    private static long generation(@Nullable ManifestStore.Versions versions) {
        return versions == null ? 0 : versions.newest().generation();
    }

    private List<ManifestStore.Versions> children(RingNode node, String directory) throws IOException {
        List<ManifestStore.Versions> children = new ArrayList<>();
        ManifestStore manifests = new ManifestStore(node);
        for (String key : node.storage().listEverywhere(NamespaceKeys.childrenPrefix(directory)).keySet()) {
            ManifestStore.Versions child = manifests.read(key, "a manifest under " + display(directory));
            if (child != null && !child.newest().isTombstone()
                    && NamespaceKeys.parent(child.newest().path()).equals(directory)) {
                children.add(child);
            }
        }
        return children;
    }

    /** "/a/b" for any form of the path; relative paths are taken from the root. */
    private String normalize(Path path) {
        URI pathUri = path.toUri();
        if (pathUri.getScheme() != null && !Sr3FileSystemFactory.SCHEME.equals(pathUri.getScheme())) {
            throw new IllegalArgumentException("Path " + path + " is not an sr3:// path");
        }
        String authority = pathUri.getAuthority() == null ? "" : pathUri.getAuthority();
        if (pathUri.getScheme() != null && !authority.equals(namespace)) {
            throw new IllegalArgumentException("Path " + path + " belongs to sr3://" + authority + "/, not to " + uri);
        }
        String p = pathUri.getPath();
        if (p == null || p.isEmpty()) {
            return NamespaceKeys.ROOT;
        }
        if (!p.startsWith("/")) {
            p = "/" + p;
        }
        while (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return namespace.isEmpty() ? p : "/" + namespace + p;
    }

    private String display(String key) {
        String p = namespace.isEmpty() ? key : key.substring(namespace.length() + 1);
        return Sr3FileSystemFactory.SCHEME + "://" + namespace + p;
    }

    private FileStatus status(Manifest manifest, RingNode node) {
        short replication = (short) (manifest.directory() ? 0 : manifest.copiesOr(node.config().replicationFactor()));
        return new Sr3FileStatus(manifest, new Path(display(manifest.path())), replication);
    }

    /**
     * A file's or directory's status as recorded in its manifest; its replication is, as in HDFS,
     * the copies the file asks for, not the copies that exist now.
     */
    private record Sr3FileStatus(Manifest manifest, Path path, short replication) implements FileStatus {
        @Override
        public long getLen() {
            return manifest.length();
        }

        @Override
        public long getBlockSize() {
            return manifest.blocks().isEmpty() ? 0 : manifest.blocks().get(0).length();
        }

        @Override
        public short getReplication() {
            return replication;
        }

        @Override
        public long getModificationTime() {
            return manifest.modificationTime();
        }

        @Override
        public long getAccessTime() {
            return 0;
        }

        @Override
        public boolean isDir() {
            return manifest.directory();
        }

        @Override
        public Path getPath() {
            return path;
        }
    }

    /** Where one block lives. */
    private record Sr3BlockLocation(Manifest.BlockRef block, long offset) implements BlockLocation {
        @Override
        public String[] getHosts() {
            return block.holders().stream().map(Member::host).distinct().toArray(String[]::new);
        }

        @Override
        public long getOffset() {
            return offset;
        }

        @Override
        public long getLength() {
            return block.length();
        }

        @Override
        public int compareTo(BlockLocation other) {
            return Long.compare(offset, other.getOffset());
        }
    }
}
