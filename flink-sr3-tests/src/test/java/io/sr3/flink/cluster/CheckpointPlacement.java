package io.sr3.flink.cluster;

import io.sr3.flink.fs.RingCensus;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the copies of every file of one completed checkpoint are, its {@code _metadata} included,
 * and which pairs of ring members the checkpoint can lose: the placement a test reads before it
 * kills nodes.
 *
 * @param id the checkpoint id
 * @param path the checkpoint's directory, as the REST API's {@code external_path} gives it
 * @param files every file, tagged by the job vertex whose state it holds
 */
record CheckpointPlacement(long id, String path, List<FileCopies> files) {

    CheckpointPlacement {
        files = List.copyOf(files);
    }

    /** The files of one vertex (as tagged in {@link FileCopies#vertex()}). */
    List<FileCopies> of(String vertex) {
        return files.stream().filter(f -> f.vertex().equals(vertex)).toList();
    }

    /**
     * Two holders of one block of a file of {@code vertex} such that no file of any other vertex
     * (nor {@code _metadata}) loses its manifest or a block with both of them; the first such pair
     * in file, block and member order, or null if the checkpoint has none.
     */
    @Nullable
    Victims pairHoldingOnly(String vertex) {
        List<FileCopies> others = files.stream().filter(f -> !f.vertex().equals(vertex)).toList();
        for (FileCopies file : of(vertex)) {
            for (int b = 0; b < file.blockHolders().size(); b++) {
                List<String> holders = new ArrayList<>(new TreeSet<>(file.blockHolders().get(b)));
                for (int i = 0; i < holders.size(); i++) {
                    for (int j = i + 1; j < holders.size(); j++) {
                        Set<String> pair = Set.of(holders.get(i), holders.get(j));
                        if (others.stream().noneMatch(o -> o.lostWith(pair))) {
                            return new Victims(this, file, "block " + b + " on " + holders, pair);
                        }
                    }
                }
            }
        }
        return null;
    }

    @Override
    public String toString() {
        Map<String, List<String>> byVertex = new LinkedHashMap<>();
        files.forEach(f -> byVertex.computeIfAbsent(f.vertex(), v -> new ArrayList<>()).add(f.toString()));
        return "checkpoint " + id + " " + byVertex;
    }

    /** A pair of members to kill, the block of {@code file} they hold copies of, and the checkpoint it was chosen in. */
    record Victims(CheckpointPlacement checkpoint, FileCopies file, String block, Set<String> members) {}

    /**
     * One file.
     *
     * @param vertex the job vertex whose state it holds, or {@code _metadata}
     * @param copies the copies its manifest asks for
     * @param manifestHolders the members that hold a copy of its manifest
     * @param blockHolders per block, the members its manifest names as holders
     */
    record FileCopies(String path, String vertex, int copies, Set<String> manifestHolders, List<Set<String>> blockHolders) {

        FileCopies {
            manifestHolders = Set.copyOf(manifestHolders);
            blockHolders = blockHolders.stream().<Set<String>>map(Set::copyOf).toList();
        }

        static FileCopies of(String vertex, RingCensus.Placement placement) {
            return new FileCopies(placement.path(), vertex, placement.copies(), Set.copyOf(placement.manifestHolders()),
                    placement.blockHolders().stream().<Set<String>>map(Set::copyOf).toList());
        }

        /** Whether the manifest asks for {@code n} copies and every block has {@code n} holders. */
        boolean hasCopies(int n) {
            return copies == n && blockHolders.stream().allMatch(h -> h.size() == n);
        }

        /** Whether losing every member in {@code members} loses the file: its manifest or a block has no copy elsewhere. */
        boolean lostWith(Set<String> members) {
            return members.containsAll(manifestHolders) || blockHolders.stream().anyMatch(members::containsAll);
        }

        @Override
        public String toString() {
            return path.replaceAll(".*/", "") + " copies " + copies + " manifest on " + new TreeSet<>(manifestHolders)
                    + " blocks on " + blockHolders.stream().map(TreeSet::new).toList();
        }
    }
}
