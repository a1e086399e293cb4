package io.sr3.flink.fs;

import io.sr3.flink.ring.Member;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link Manifest#decode} over hostile and damaged bytes: every count and length is checked
 * against the bytes left before anything is allocated, and the error names the field, the value
 * it claims and the bytes left.
 */
class ManifestDecodeTest {

    private static final String PATH = "/job/chk-1/state";
    /** magic i32, version u8, kind u8, generation, modified and length i64, copies u8. */
    private static final int COPIES_OFFSET = 4 + 1 + 1 + 8 + 8 + 8;
    private static final int PATH_OFFSET = COPIES_OFFSET + 1;
    private static final int BLOCK_COUNT_OFFSET = PATH_OFFSET + 2 + PATH.length();

    private static final Member HOLDER = new Member("n0000000000000001", "10.0.0.1", 6130, "");

    private static byte[] oneBlockFile() {
        return Manifest.file(PATH, 7, 1000, 3,
                List.of(new Manifest.BlockRef("b-1", 3, 0x1234, List.of(HOLDER)))).encode();
    }

    @Test
    void aManifestRoundTrips() throws IOException {
        Manifest manifest = Manifest.decode(oneBlockFile(), "test");
        assertThat(manifest.path()).isEqualTo(PATH);
        assertThat(manifest.blocks()).singleElement().satisfies(b -> {
            assertThat(b.key()).isEqualTo("b-1");
            assertThat(b.holders()).containsExactly(new Member(HOLDER.nodeId(), HOLDER.host(), HOLDER.port(), ""));
        });
    }

    @Test
    void aFileKeepsTheCopiesItAsksFor() throws IOException {
        Manifest manifest = Manifest.file(PATH, 7, 1000, 3,
                List.of(new Manifest.BlockRef("b-1", 3, 0x1234, List.of(HOLDER))), 3);
        Manifest decoded = Manifest.decode(manifest.encode(), "test");
        assertThat(decoded.copies()).isEqualTo(3);
        assertThat(decoded.copiesOr(2)).isEqualTo(3);
        assertThat(decoded.withPath("/elsewhere", 8).copies()).as("a rename keeps the copies").isEqualTo(3);
        assertThat(Manifest.decode(oneBlockFile(), "test").copiesOr(2)).as("a file that follows the ring").isEqualTo(2);
    }

    @Test
    void aVersion2ManifestWrittenBeforeCopiesExistedFollowsTheRing() throws IOException {
        byte[] current = oneBlockFile();
        byte[] version2 = new byte[current.length - 1];
        System.arraycopy(current, 0, version2, 0, COPIES_OFFSET);
        System.arraycopy(current, PATH_OFFSET, version2, COPIES_OFFSET, current.length - PATH_OFFSET);
        version2[4] = Manifest.VERSION_WITHOUT_COPIES;
        Manifest decoded = Manifest.decode(version2, "an older node");
        assertThat(decoded.copies()).isEqualTo(Manifest.RING_DEFAULT);
        assertThat(decoded.path()).isEqualTo(PATH);
        assertThat(decoded.blocks()).hasSize(1);
    }

    @Test
    void anUnknownVersionIsRefused() {
        byte[] newer = oneBlockFile();
        newer[4] = (byte) (Manifest.VERSION + 1);
        assertThatThrownBy(() -> Manifest.decode(newer, "a newer node"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("version " + (Manifest.VERSION + 1))
                .hasMessageContaining("a newer node");
    }

    @Test
    void manySmallBlocksWithoutHoldersDecode() throws IOException {
        // 12 bytes per block: a bound of 15 bytes per block refused this valid manifest.
        List<Manifest.BlockRef> blocks = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            blocks.add(new Manifest.BlockRef("k", 1, i, List.of()));
        }
        Manifest manifest = Manifest.file(PATH, 1, 1, 100, blocks);
        assertThat(Manifest.decode(manifest.encode(), "test")).isEqualTo(manifest);
    }

    @Test
    void aHugeBlockCountIsRefusedNamingTheCountAndTheBytesLeft() {
        byte[] hostile = withIntAt(oneBlockFile(), BLOCK_COUNT_OFFSET, Integer.MAX_VALUE);
        int left = hostile.length - BLOCK_COUNT_OFFSET - 4;
        assertThatThrownBy(() -> Manifest.decode(hostile, "node-x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("node-x")
                .hasMessageContaining("block count " + Integer.MAX_VALUE)
                .hasMessageContaining(left + " bytes left");
    }

    @Test
    void aNegativeBlockCountIsRefused() {
        byte[] hostile = withIntAt(oneBlockFile(), BLOCK_COUNT_OFFSET, -5);
        int left = hostile.length - BLOCK_COUNT_OFFSET - 4;
        assertThatThrownBy(() -> Manifest.decode(hostile, "node-x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("block count -5")
                .hasMessageContaining(left + " bytes left");
    }

    @Test
    void aHolderCountTheBytesCannotHoldIsRefused() {
        byte[] encoded = oneBlockFile();
        int holderCountOffset = BLOCK_COUNT_OFFSET + 4 + 2 + "b-1".length() + 4 + 4;
        byte[] hostile = Arrays.copyOf(encoded, holderCountOffset + 1 + 6);
        hostile[holderCountOffset] = (byte) 255;
        assertThatThrownBy(() -> Manifest.decode(hostile, "node-x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("holder count of block b-1 255")
                .hasMessageContaining("6 bytes left");
    }

    @Test
    void aStringLengthPastTheEndIsRefusedNamingTheField() {
        byte[] encoded = oneBlockFile();
        byte[] hostilePath = encoded.clone();
        hostilePath[PATH_OFFSET] = (byte) 0xFF;
        hostilePath[PATH_OFFSET + 1] = (byte) 0xFF;
        assertThatThrownBy(() -> Manifest.decode(hostilePath, "node-x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("node-x")
                .hasMessageContaining("path length 65535")
                .hasMessageContaining((encoded.length - PATH_OFFSET - 2) + " bytes left");

        int keyOffset = BLOCK_COUNT_OFFSET + 4;
        byte[] hostileKey = encoded.clone();
        hostileKey[keyOffset] = (byte) 0xFF;
        hostileKey[keyOffset + 1] = (byte) 0xFF;
        assertThatThrownBy(() -> Manifest.decode(hostileKey, "node-x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("block key length 65535")
                .hasMessageContaining((encoded.length - keyOffset - 2) + " bytes left");
    }

    @Test
    void aTruncatedManifestSaysWhereItEnds() {
        byte[] encoded = oneBlockFile();
        byte[] cut = Arrays.copyOf(encoded, BLOCK_COUNT_OFFSET + 2);
        assertThatThrownBy(() -> Manifest.decode(cut, "node-x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("node-x")
                .hasMessageContaining("truncated")
                .hasMessageContaining("of " + cut.length);
    }

    private static byte[] withIntAt(byte[] bytes, int offset, int value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).putInt(offset, value);
        return copy;
    }
}
