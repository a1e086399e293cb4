package io.sr3.flink.benchmark.restore;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import io.sr3.flink.restore.BlockFetch;
import io.sr3.flink.ring.Member;
import org.apache.flink.util.FileUtils;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * The holders of one scenario in this JVM, shaped as the scenario says, holding a state written
 * straight into their stores; and recovering nodes started next to them on demand. Closing it
 * stops every node and deletes every store.
 */
@NotThreadSafe
public final class ShapedRing implements AutoCloseable {

    /** 1 MiB blocks in 4 MiB frames, 30 s per request, no fsync: the brief's node settings. */
    public static final int BLOCK_SIZE = 1 << 20;
    public static final int MAX_FRAME_SIZE = 4 << 20;
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    private static final NodeConfig TEMPLATE = new NodeConfig("127.0.0.1", List.of(0), List.of(), 2, "", 16, null, false,
            null, MAX_FRAME_SIZE, REQUEST_TIMEOUT, Duration.ofMillis(500), Duration.ofSeconds(10), BLOCK_SIZE);

    private final Scenario scenario;
    private final Path directory;
    private final List<RingNode> holders = new ArrayList<>();
    private int recoveringStarted;

    private ShapedRing(Scenario scenario, Path directory) {
        this.scenario = scenario;
        this.directory = directory;
    }

    /** Starts the scenario's holders under {@code directory} and shapes the links between them. */
    public static ShapedRing start(Scenario scenario, Path directory) throws IOException {
        ShapedRing ring = new ShapedRing(scenario, directory);
        try {
            for (int i = 0; i < scenario.holders(); i++) {
                ring.holders.add(RingNode.start(TEMPLATE.withPortAndStore(0, directory.resolve("holder-" + i))));
            }
            if (scenario.shaped()) {
                for (RingNode holder : ring.holders) {
                    holder.shapeInboundLinks(scenario.holderShaper());
                }
            }
        } catch (IOException | RuntimeException e) {
            ring.close();
            throw e;
        }
        return ring;
    }

    public List<Member> holders() {
        return holders.stream().map(RingNode::self).toList();
    }

    /**
     * Writes {@code bytes} of random {@link #BLOCK_SIZE} blocks into the holders' stores, block
     * {@code i} on holders {@code i} and {@code i + 1} (mod the holder count), flushes them to disk
     * and returns what a restore of it must fetch, in block order. Flushed, because a checkpoint
     * restored after a failure was written long before it: the restores must not share the disk
     * with the write-back of gigabytes placed a moment ago (the first structure measured did).
     */
    public List<BlockFetch> placeState(long bytes) throws IOException {
        int blocks = (int) ((bytes + BLOCK_SIZE - 1) / BLOCK_SIZE);
        List<BlockFetch> fetches = new ArrayList<>(blocks);
        byte[] data = new byte[BLOCK_SIZE];
        SplittableRandom random = new SplittableRandom(blocks);
        for (int i = 0; i < blocks; i++) {
            int length = (int) Math.min(BLOCK_SIZE, bytes - (long) i * BLOCK_SIZE);
            ByteBuffer fill = ByteBuffer.wrap(data);
            while (fill.remaining() >= Long.BYTES) {
                fill.putLong(random.nextLong());
            }
            byte[] block = length == BLOCK_SIZE ? data : java.util.Arrays.copyOf(data, length);
            CRC32C crc = new CRC32C();
            crc.update(block);
            RingNode first = holders.get(i % holders.size());
            RingNode second = holders.get((i + 1) % holders.size());
            String key = "restore-bench-" + i;
            first.store().put(key, block);
            second.store().put(key, block);
            fetches.add(new BlockFetch(key, length, (int) crc.getValue(), List.of(first.self(), second.self()),
                    "block " + i + " of " + blocks + " of the " + scenario.name() + " state"));
        }
        syncToDisk();
        return fetches;
    }

    /** Runs {@code sync}: this benchmark runs on Linux only, and one call flushes every placed block. */
    private static void syncToDisk() throws IOException {
        Process sync = new ProcessBuilder("sync").inheritIO().start();
        try {
            if (!sync.waitFor(5, TimeUnit.MINUTES)) {
                sync.destroyForcibly();
                throw new IOException("sync did not finish within 5 minutes");
            }
        } catch (InterruptedException e) {
            sync.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while flushing the placed blocks to disk", e);
        }
        if (sync.exitValue() != 0) {
            throw new IOException("sync exited with " + sync.exitValue());
        }
    }

    /**
     * Has every holder read {@code reads} blocks from each of its replica neighbours (the holders
     * it shares blocks with), one at a time, as reads and re-replication would: the transfers
     * from which the holders learn the paths between them, without a probe.
     */
    public void exchangeBetweenNeighbours(List<BlockFetch> blocks, int reads) {
        Map<String, Integer> done = new HashMap<>();
        for (BlockFetch block : blocks) {
            for (Member from : block.holders()) {
                for (Member to : block.holders()) {
                    String pair = from.id() + "->" + to.id();
                    if (!from.equals(to) && done.getOrDefault(pair, 0) < reads) {
                        node(to).getVerified(from, block.key(), block.length(), block.crc32c()).join();
                        done.merge(pair, 1, Integer::sum);
                    }
                }
            }
        }
    }

    /** Has {@code reader} read {@code reads} blocks from every holder, one at a time. */
    public void readFromEveryHolder(RingNode reader, List<BlockFetch> blocks, int reads) {
        Map<String, Integer> done = new HashMap<>();
        for (BlockFetch block : blocks) {
            Member holder = block.holders().get(0);
            if (done.getOrDefault(holder.id(), 0) < reads) {
                reader.getVerified(holder, block.key(), block.length(), block.crc32c()).join();
                done.merge(holder.id(), 1, Integer::sum);
            }
        }
    }

    private RingNode node(Member member) {
        return holders.stream().filter(h -> h.self().equals(member)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(member + " is not a holder of this ring"));
    }

    /**
     * Starts a fresh recovering node with an empty store and no measurements, shaped as the
     * scenario says. The caller closes it; its store goes with this ring.
     */
    public RingNode startRecovering() throws IOException {
        RingNode node = RingNode.start(TEMPLATE.withPortAndStore(0, directory.resolve("recovering-" + recoveringStarted++)));
        if (scenario.shaped()) {
            node.shapeInboundLinks(scenario.recoveringShaper(holders()));
        }
        return node;
    }

    @Override
    public void close() throws IOException {
        for (RingNode holder : holders) {
            holder.close();
        }
        FileUtils.deleteDirectory(directory.toFile());
    }
}
