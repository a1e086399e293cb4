package io.sr3.flink.replication;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which failover region each vertex's subtasks belong to, computed from the job graph.
 *
 * <p>In a streaming job every edge is pipelined, so Flink's pipelined region (what
 * {@code RestartPipelinedRegionFailoverStrategy} restarts together) is a connected component of
 * the subtask graph. An all-to-all edge joins every subtask of both vertices; a pointwise edge
 * (FORWARD, RESCALE) joins them as Flink 2.3's {@code VertexInputInfoComputationUtils
 * .computeVertexInputInfoForPointwise} distributes them:
 *
 * <pre>
 *   sources s >= targets t: target j reads sources [j*s/t, (j+1)*s/t)
 *   sources s <  targets t: source i feeds targets [ceil(i*t/s), ceil((i+1)*t/s))
 * </pre>
 *
 * (equal parallelism: i with i). Components are found by union-find over all subtasks.
 */
public final class FailoverRegions {

    /** A job vertex and its parallelism. */
    public record Vertex(String id, int parallelism) {
        public Vertex {
            Objects.requireNonNull(id, "id");
            if (parallelism < 1) {
                throw new IllegalArgumentException("Vertex " + id + ": parallelism must be >= 1, was " + parallelism);
            }
        }
    }

    /**
     * A job edge; {@code pointwise} for FORWARD and RESCALE, false for the all-to-all ones (HASH,
     * REBALANCE, BROADCAST, ...).
     */
    public record Edge(String source, String target, boolean pointwise) {
        public Edge {
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(target, "target");
        }
    }

    private FailoverRegions() {}

    /**
     * For every vertex, the size in subtasks of the largest failover region that contains one of
     * its subtasks, in the order of {@code vertices}.
     *
     * @throws IllegalArgumentException on duplicate vertex ids or an edge naming an unknown vertex
     */
    public static Map<String, Integer> largestRegionSubtasks(List<Vertex> vertices, List<Edge> edges) {
        Map<String, Integer> offsets = offsets(vertices);
        UnionFind regions = connect(vertices, edges, offsets);
        Map<String, Integer> largest = new LinkedHashMap<>();
        for (Vertex v : vertices) {
            int offset = offsets.get(v.id());
            int max = 0;
            for (int i = 0; i < v.parallelism(); i++) {
                max = Math.max(max, regions.size(offset + i));
            }
            largest.put(v.id(), max);
        }
        return Collections.unmodifiableMap(largest);
    }

    /** Every region as its subtasks ({@code "id[i]"}), in order of their first subtask; for tests and logs. */
    static List<List<String>> regions(List<Vertex> vertices, List<Edge> edges) {
        Map<String, Integer> offsets = offsets(vertices);
        UnionFind uf = connect(vertices, edges, offsets);
        Map<Integer, List<String>> byRoot = new LinkedHashMap<>();
        for (Vertex v : vertices) {
            for (int i = 0; i < v.parallelism(); i++) {
                byRoot.computeIfAbsent(uf.find(offsets.get(v.id()) + i), r -> new ArrayList<>()).add(v.id() + "[" + i + "]");
            }
        }
        return List.copyOf(byRoot.values());
    }

    /** Each vertex's first subtask in one numbering of all subtasks. */
    private static Map<String, Integer> offsets(List<Vertex> vertices) {
        Map<String, Integer> offsets = new HashMap<>();
        int total = 0;
        for (Vertex v : vertices) {
            if (offsets.putIfAbsent(v.id(), total) != null) {
                throw new IllegalArgumentException("Duplicate vertex id " + v.id());
            }
            total = Math.addExact(total, v.parallelism());
        }
        return offsets;
    }

    private static UnionFind connect(List<Vertex> vertices, List<Edge> edges, Map<String, Integer> offsets) {
        Map<String, Integer> parallelism = new HashMap<>();
        int total = 0;
        for (Vertex v : vertices) {
            parallelism.put(v.id(), v.parallelism());
            total += v.parallelism();
        }
        UnionFind regions = new UnionFind(total);
        for (Edge e : edges) {
            Integer from = offsets.get(e.source());
            Integer to = offsets.get(e.target());
            if (from == null || to == null) {
                throw new IllegalArgumentException("Edge " + e + " names a vertex that is not in " + offsets.keySet());
            }
            int s = parallelism.get(e.source());
            int t = parallelism.get(e.target());
            if (!e.pointwise()) {
                for (int i = 0; i < s; i++) {
                    regions.union(from, from + i);
                }
                for (int j = 0; j < t; j++) {
                    regions.union(from, to + j);
                }
            } else if (s >= t) {
                for (int j = 0; j < t; j++) {
                    for (int i = (int) ((long) j * s / t); i < (int) ((long) (j + 1) * s / t); i++) {
                        regions.union(from + i, to + j);
                    }
                }
            } else {
                for (int i = 0; i < s; i++) {
                    for (int j = ceilDiv((long) i * t, s); j < ceilDiv((long) (i + 1) * t, s); j++) {
                        regions.union(from + i, to + j);
                    }
                }
            }
        }
        return regions;
    }

    private static int ceilDiv(long a, long b) {
        return (int) ((a + b - 1) / b);
    }

    /** Disjoint sets of subtasks, with union by size and path halving. */
    private static final class UnionFind {
        private final int[] parent;
        private final int[] size;

        UnionFind(int n) {
            parent = new int[n];
            size = new int[n];
            for (int i = 0; i < n; i++) {
                parent[i] = i;
                size[i] = 1;
            }
        }

        int find(int x) {
            while (parent[x] != x) {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            return x;
        }

        void union(int a, int b) {
            int ra = find(a);
            int rb = find(b);
            if (ra == rb) {
                return;
            }
            if (size[ra] < size[rb]) {
                int swap = ra;
                ra = rb;
                rb = swap;
            }
            parent[rb] = ra;
            size[ra] += size[rb];
        }

        int size(int x) {
            return size[find(x)];
        }
    }
}
