package io.sr3.flink.benchmark.replication;

import io.sr3.flink.replication.FailoverRegions;
import io.sr3.flink.replication.FailoverRegions.Edge;
import io.sr3.flink.replication.FailoverRegions.Vertex;
import io.sr3.flink.replication.OperatorProfile;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.UUID;

/**
 * The job the replication benchmark protects: a fixed table of vertices and edges, its stateful
 * operators' profiles, where its subtasks run and the checkpoint files each subtask writes.
 *
 * <p>Two pipelines, as one Flink job:
 *
 * <pre>
 *   a-source (4) --hash--> b-dedup (4) --hash--> c-window (4)       one failover region of 12 subtasks
 *   d-bulk-source (8) --forward--> e-join (8) --forward--> f-daily (8)   eight regions of 3 subtasks
 * </pre>
 *
 * The first pipeline is small-state and loaded (its dedup runs at 83% of its capacity, so a
 * restart replays a long backlog, and any failure in it restarts all 12 subtasks); the second
 * holds the big state (2 GiB and 1 GiB) at 5% load in small regions. Slot sharing as Flink's
 * default: subtask i of every vertex runs in slot i, slot i on node {@code i mod nodes}. Each
 * subtask writes its share of the operator's state ({@code stateBytes / parallelism}) as files of
 * at most {@link #FILE_BYTES} (RocksDB's default target SST size), each in blocks of
 * {@link #BLOCK_BYTES} (the ring's block size).
 */
public final class BenchmarkJob {

    public static final long MIB = 1L << 20;
    /** The largest checkpoint file: RocksDB's default {@code target_file_size_base}. */
    public static final long FILE_BYTES = 64 * MIB;
    /** The ring's block size. */
    public static final long BLOCK_BYTES = 4 * MIB;

    /** One row of the job's table: a vertex, and its state and rates when it is stateful. */
    public record Row(String id, String name, int parallelism, long stateBytes, double inputRecordsPerSecond,
            double capacityRecordsPerSecond) {
        public Row {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(name, "name");
        }
    }

    /** One checkpoint file of one subtask. */
    public record CheckpointFile(String operatorId, int subtask, int node, String path, String fileId, long bytes,
            int blocks) {}

    public static final List<Row> ROWS = List.of(
            new Row("a-source", "events source", 4, 10 * MIB, 20_000, 200_000),
            new Row("b-dedup", "dedup (keyed)", 4, 48 * MIB, 20_000, 24_000),
            new Row("c-window", "session windows", 4, 256 * MIB, 20_000, 60_000),
            new Row("d-bulk-source", "bulk source (stateless)", 8, 0, 2_000, 1_000_000),
            new Row("e-join", "enrichment join", 8, 2048 * MIB, 2_000, 40_000),
            new Row("f-daily", "daily aggregates", 8, 1024 * MIB, 2_000, 40_000));
    public static final List<Edge> EDGES = List.of(
            new Edge("a-source", "b-dedup", false),
            new Edge("b-dedup", "c-window", false),
            new Edge("d-bulk-source", "e-join", true),
            new Edge("e-join", "f-daily", true));

    private final int nodes;

    /** The job on a ring of {@code nodes} nodes. */
    public BenchmarkJob(int nodes) {
        if (nodes < 1) {
            throw new IllegalArgumentException("nodes must be >= 1, was " + nodes);
        }
        this.nodes = nodes;
    }

    /** The profiles of the stateful operators, with their failover regions from {@link FailoverRegions}. */
    public List<OperatorProfile> profiles() {
        List<Vertex> vertices = ROWS.stream().map(r -> new Vertex(r.id(), r.parallelism())).toList();
        Map<String, Integer> regions = FailoverRegions.largestRegionSubtasks(vertices, EDGES);
        List<OperatorProfile> profiles = new ArrayList<>();
        for (Row r : ROWS) {
            if (r.stateBytes() > 0) {
                profiles.add(new OperatorProfile(r.id(), r.name(), r.parallelism(), r.stateBytes(),
                        r.inputRecordsPerSecond(), r.capacityRecordsPerSecond(), regions.get(r.id())));
            }
        }
        return profiles;
    }

    /** The node (index into the ring's members) that runs {@code subtask}: Flink's default slot sharing. */
    public int nodeOf(int subtask) {
        return subtask % nodes;
    }

    /** Every stateful subtask's files of the latest checkpoint; ids and paths drawn from {@code random}. */
    public List<CheckpointFile> files(Random random) {
        String job = uuid(random).replace("-", "");
        List<CheckpointFile> files = new ArrayList<>();
        for (Row r : ROWS) {
            long perSubtask = r.stateBytes() / r.parallelism();
            for (int s = 0; s < r.parallelism(); s++) {
                for (long written = 0; written < perSubtask; written += FILE_BYTES) {
                    long bytes = Math.min(FILE_BYTES, perSubtask - written);
                    // RocksDB's incremental files live in the job's shared/ directory under a UUID name.
                    String path = "/flink-checkpoints/" + job + "/shared/" + uuid(random);
                    files.add(new CheckpointFile(r.id(), s, nodeOf(s), path, uuid(random), bytes,
                            (int) ((bytes + BLOCK_BYTES - 1) / BLOCK_BYTES)));
                }
            }
        }
        return files;
    }

    /** The path of the latest checkpoint's {@code _metadata}, which the JobManager writes. */
    public static String metadataPath(Random random) {
        return "/flink-checkpoints/" + uuid(random).replace("-", "") + "/chk-100/_metadata";
    }

    /**
     * The vertices Flink restarts when the nodes in {@code deadNodes} (bit i = node i) fail: every
     * vertex with a subtask on a dead node, and every vertex connected to one of those by an edge
     * (any edge joins some subtasks of both ends into one pipelined region, and an operator's
     * restore and replay are the same for each of its subtasks, so the vertex level is enough).
     */
    public Set<String> restarted(long deadNodes) {
        Set<String> hit = new HashSet<>();
        for (Row r : ROWS) {
            for (int s = 0; s < r.parallelism() && !hit.contains(r.id()); s++) {
                if ((deadNodes & (1L << nodeOf(s))) != 0) {
                    hit.add(r.id());
                }
            }
        }
        return connected(hit);
    }

    private static Set<String> connected(Collection<String> start) {
        Map<String, List<String>> neighbours = new LinkedHashMap<>();
        for (Edge e : EDGES) {
            neighbours.computeIfAbsent(e.source(), k -> new ArrayList<>()).add(e.target());
            neighbours.computeIfAbsent(e.target(), k -> new ArrayList<>()).add(e.source());
        }
        Set<String> seen = new HashSet<>(start);
        Deque<String> todo = new ArrayDeque<>(start);
        while (!todo.isEmpty()) {
            for (String n : neighbours.getOrDefault(todo.pop(), List.of())) {
                if (seen.add(n)) {
                    todo.push(n);
                }
            }
        }
        return seen;
    }

    private static String uuid(Random random) {
        return new UUID(random.nextLong(), random.nextLong()).toString();
    }
}
