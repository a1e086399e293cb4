package io.sr3.flink.fs;

import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.Fuzzer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random and mutated bytes through {@link Manifest#decode}: a manifest read from a peer or a disk
 * must decode or be refused with the {@link IOException} its contract names (never an {@link
 * IllegalArgumentException} or a runtime error of the stream underneath); see {@link Fuzzer} for
 * what else fails a run and how to replay one.
 */
class ManifestFuzzTest {

    private static final Member A = new Member("n0000000000000001", "10.0.0.1", 6130, "");
    private static final Member B = new Member("127.0.0.1", 6131, "");
    private static final Member C = new Member("узел-✓", "host.example.com", 65535, "");

    @Test
    void manifests() throws Exception {
        List<Manifest.BlockRef> small = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            small.add(new Manifest.BlockRef("k" + i, 1, i, List.of()));
        }
        List<byte[]> valid = List.of(
                Manifest.file("/job/chk-1/state", 7, 1000, 3,
                        List.of(new Manifest.BlockRef("b-1", 3, 0x1234, List.of(A)))).encode(),
                Manifest.file("/job/chk-2/_metadata", Long.MAX_VALUE, -1, 4096 + 17, List.of(
                        new Manifest.BlockRef("b-2", 4096, -1, List.of(A, B, C)),
                        new Manifest.BlockRef("b-3", 17, 0, List.of(B)))).encode(),
                Manifest.file("/empty", 1, 0, 0, List.of()).encode(),
                Manifest.file("/many/small", 2, 2, small.size(), small).encode(),
                Manifest.directory("/job/chk-1", 3, 1234).encode(),
                Manifest.tombstone("/job/chk-0/пуць-€", 9, 99).encode(),
                Manifest.directory("", 0, 0).encode());
        Fuzzer.Result result = new Fuzzer("Manifest.decode").valid(valid).refusesWith(IOException.class)
                .run(bytes -> Manifest.decode(bytes, "fuzz input"));
        assertThat(result.decoded()).as(result.line()).isPositive();
    }
}
