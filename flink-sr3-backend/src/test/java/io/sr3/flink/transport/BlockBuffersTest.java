package io.sr3.flink.transport;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BlockBuffersTest {

    private static final int SIZE = 2 * BlockBuffers.MIN_POOLED_BYTES;

    @Test
    void lendsDirectBuffersLimitedToTheBlockAndReusesWhatComesBack() {
        BlockBuffers buffers = new BlockBuffers(SIZE, 2);

        ByteBuffer first = buffers.acquire(SIZE - 10);
        assertThat(first.isDirect()).isTrue();
        assertThat(first.position()).isZero();
        assertThat(first.limit()).isEqualTo(SIZE - 10);
        assertThat(buffers.release(first)).isTrue();
        ByteBuffer again = buffers.acquire(SIZE);

        assertThat(again).isSameAs(first);
        assertThat(again.limit()).isEqualTo(SIZE);
        assertThat(buffers.created()).isEqualTo(1);
        assertThat(buffers.lent()).isEqualTo(1);
    }

    @Test
    void handsOutHeapBuffersOnceEveryDirectOneIsLentAndCountsThem() {
        BlockBuffers buffers = new BlockBuffers(SIZE, 2);
        ByteBuffer a = buffers.acquire(SIZE);
        ByteBuffer b = buffers.acquire(SIZE);

        ByteBuffer third = buffers.acquire(SIZE);

        assertThat(a.isDirect() && b.isDirect()).isTrue();
        assertThat(third.isDirect()).isFalse();
        assertThat(third.remaining()).isEqualTo(SIZE);
        assertThat(buffers.heapFallbacks()).isEqualTo(1);
        assertThat(buffers.release(third)).as("a heap buffer is not the pool's").isFalse();
        assertThat(buffers.created()).isEqualTo(2);
    }

    @Test
    void smallAndOversizedBlocksGetHeapBuffers() {
        BlockBuffers buffers = new BlockBuffers(SIZE, 2);

        assertThat(buffers.acquire(BlockBuffers.MIN_POOLED_BYTES - 1).isDirect()).isFalse();
        assertThat(buffers.acquire(SIZE + 1).isDirect()).isFalse();
        assertThat(buffers.acquire(SIZE + 1).remaining()).isEqualTo(SIZE + 1);
        assertThat(buffers.created()).isZero();
        assertThat(buffers.heapFallbacks()).as("not a shortage").isZero();
    }

    @Test
    void aSecondReleaseOrAForeignBufferChangesNothing() {
        BlockBuffers buffers = new BlockBuffers(SIZE, 2);
        ByteBuffer lent = buffers.acquire(SIZE);
        assertThat(buffers.release(lent)).isTrue();

        assertThat(buffers.release(lent)).as("released twice").isFalse();
        assertThat(buffers.release(ByteBuffer.allocateDirect(SIZE))).as("never lent").isFalse();
        ByteBuffer a = buffers.acquire(SIZE);
        ByteBuffer b = buffers.acquire(SIZE);
        assertThat(a).as("one buffer is never lent twice at once").isNotSameAs(b);
    }

    @Test
    void refusesNonsense() {
        assertThatThrownBy(() -> new BlockBuffers(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BlockBuffers(SIZE, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BlockBuffers(SIZE, 1).acquire(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
