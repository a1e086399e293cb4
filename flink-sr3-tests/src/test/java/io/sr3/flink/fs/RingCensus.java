package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.zip.CRC32C;

/**
 * Counts the intact replicas of every block of an {@code sr3://} file by asking every storage
 * member of the ring for it, instead of trusting the holders a manifest records: a test's view
 * of what is really stored.
 *
 * <p>It lives in this package for the one thing the public API does not tell: which blocks make a
 * file ({@link Manifest}). Every copy is fetched over the wire and checked against the length and
 * CRC32C the manifest records, so a census also reads every block.
 */
public final class RingCensus {

    private static final long REQUEST_SECONDS = 30;

    private RingCensus() {}

    /**
     * One block.
     *
     * @param intactOn ids of the members that returned an intact copy
     * @param problems what the other members answered, by member id
     */
    public record BlockCensus(String key, int length, List<String> intactOn, Map<String, String> problems) {
        public int replicas() {
            return intactOn.size();
        }
    }

    /**
     * One file.
     *
     * @param path the {@code sr3://} path
     * @param length the length its manifest records
     * @param blocks its blocks in order
     * @param content the file's bytes, or null if a block has no intact copy
     */
    public record FileCensus(String path, long length, List<BlockCensus> blocks, @Nullable byte[] content) {

        /** Bytes of blocks that no member holds intact. */
        public long lostBytes() {
            return blocks.stream().filter(b -> b.replicas() == 0).mapToLong(BlockCensus::length).sum();
        }

        /** The fewest intact replicas of any block; {@code Integer.MAX_VALUE} for a file without blocks. */
        public int minReplicas() {
            return blocks.stream().mapToInt(BlockCensus::replicas).min().orElse(Integer.MAX_VALUE);
        }
    }

    /**
     * Takes the census of one file through {@code node} (a client of the ring is enough).
     *
     * @throws java.io.FileNotFoundException if no member holds the file's manifest
     */
    public static FileCensus of(RingNode node, String sr3Path) throws IOException {
        String key = key(sr3Path);
        byte[] encoded = node.storage().readAny(NamespaceKeys.manifestKey(key), "manifest of " + sr3Path);
        if (encoded == null) {
            throw new java.io.FileNotFoundException("No storage member of " + node.membership().members()
                    + " holds the manifest of " + sr3Path);
        }
        Manifest manifest = Manifest.decode(encoded, sr3Path);
        List<Member> members = node.membership().members();
        List<BlockCensus> blocks = new ArrayList<>();
        ByteArrayOutputStream content = new ByteArrayOutputStream((int) Math.min(manifest.length(), 1 << 26));
        boolean complete = true;
        for (Manifest.BlockRef block : manifest.blocks()) {
            List<String> intact = new ArrayList<>();
            Map<String, String> problems = new LinkedHashMap<>();
            byte[] firstIntact = null;
            for (Member member : members) {
                try {
                    byte[] data = node.get(member, block.key()).get(REQUEST_SECONDS, TimeUnit.SECONDS);
                    String problem = check(data, block.length(), block.crc32c());
                    if (problem == null) {
                        intact.add(member.id());
                        if (firstIntact == null) {
                            firstIntact = data;
                        }
                    } else {
                        problems.put(member.id(), problem);
                    }
                } catch (ExecutionException e) {
                    problems.put(member.id(), String.valueOf(e.getCause()));
                } catch (TimeoutException e) {
                    problems.put(member.id(), "no answer within " + REQUEST_SECONDS + " s");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("Interrupted during the census of " + sr3Path);
                }
            }
            blocks.add(new BlockCensus(block.key(), block.length(), intact, problems));
            if (firstIntact == null) {
                complete = false;
            } else {
                content.write(firstIntact);
            }
        }
        return new FileCensus(sr3Path, manifest.length(), blocks, complete ? content.toByteArray() : null);
    }

    /**
     * Where a file's copies are, as its newest manifest records them, every reachable member asked
     * for the manifest; no block is read.
     *
     * @param copies the copies the manifest asks for (the ring's replication factor if it follows the ring)
     * @param manifestHolders ids of the members that hold a copy of the manifest: without one of them
     *     the file cannot be found, whatever holds its blocks
     * @param blockHolders per block, ids of the members the manifest names as its holders
     */
    public record Placement(String path, int copies, List<String> manifestHolders, List<List<String>> blockHolders) {}

    /**
     * The {@link Placement} of one file through {@code node} (a client of the ring is enough).
     *
     * @throws java.io.FileNotFoundException if no member holds a live manifest of the file
     */
    public static Placement placement(RingNode node, String sr3Path) throws IOException {
        ManifestStore.Versions versions = new ManifestStore(node).readEvery(NamespaceKeys.manifestKey(key(sr3Path)),
                "manifest of " + sr3Path);
        if (versions == null || versions.newest().isTombstone()) {
            throw new java.io.FileNotFoundException("No live manifest of " + sr3Path + " on "
                    + node.membership().members());
        }
        Manifest manifest = versions.newest();
        List<List<String>> blocks = new ArrayList<>();
        for (Manifest.BlockRef block : manifest.blocks()) {
            blocks.add(block.holders().stream().map(Member::id).toList());
        }
        return new Placement(sr3Path, manifest.copiesOr(node.config().replicationFactor()),
                versions.holders().stream().map(Member::id).toList(), blocks);
    }

    @Nullable
    private static String check(byte[] data, int length, int crc32c) {
        if (data.length != length) {
            return "length " + data.length + " != " + length;
        }
        CRC32C crc = new CRC32C();
        crc.update(data);
        return (int) crc.getValue() == crc32c ? null : "CRC32C mismatch";
    }

    /** "/a/b" for {@code sr3:///a/b}, {@code sr3:/a/b} or {@code /a/b}; namespaced paths are not supported. */
    private static String key(String sr3Path) {
        URI uri = URI.create(sr3Path);
        if (uri.getAuthority() != null && !uri.getAuthority().isEmpty()) {
            throw new IllegalArgumentException("The census reads the default namespace only, not " + sr3Path);
        }
        String p = uri.getPath();
        while (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p.startsWith("/") ? p : "/" + p;
    }
}
