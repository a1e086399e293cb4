package io.sr3.flink.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Sealed frames between a real {@link FrameEncoder} and {@link FrameDecoder}: what opens, what is refused. */
class FrameSealTest {

    private static final byte[] KEY = "a session key of thirty-two byte".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OTHER_KEY = "another key of thirty-two bytes!".getBytes(StandardCharsets.US_ASCII);
    private static final int BLOCK = 1 << 20;
    private static final int MAX_FRAME = BLOCK + 1024;

    @Test
    void aSealedBlockOpensInALentBufferAndIsNotReadableOnTheWire() {
        ByteBuffer block = directBlock(BLOCK, 1);
        byte[] wire = encode(KEY, put("b-1", block));
        BlockBuffers buffers = new BlockBuffers(MAX_FRAME, 2);
        EmbeddedChannel receiver = receiver(KEY, buffers);

        receiver.writeInbound(Unpooled.wrappedBuffer(wire));
        Frame frame = receiver.readInbound();

        assertThat(frame.type()).isEqualTo(MessageType.PUT_BLOCK);
        assertThat(frame.block().isDirect()).as("opened in a buffer of the pool").isTrue();
        assertThat(buffers.lent()).isEqualTo(1);
        assertThat(frame.block()).isEqualTo(block);
        assertThat(frame.blockCrc()).isEqualTo(crc(block));
        assertThat(Payloads.putBlockKey(frame.head())).isEqualTo("b-1");
        assertThat(wire).hasSize(Frame.HEADER_SIZE + 2 + 3 + BLOCK + FrameSeal.OVERHEAD);
        assertThat(indexOf(wire, bytes(block, 0, 64))).as("the block's first bytes on the wire").isNegative();
        assertThat(indexOf(wire, "b-1".getBytes(StandardCharsets.UTF_8))).as("the key on the wire").isNegative();
        assertThat(ByteBuffer.wrap(wire).getInt(18)).as("the header's checksum field").isZero();
        receiver.finishAndReleaseAll();
    }

    @Test
    void framesOpenInOrderAndAReplayedFrameIsRefused() {
        FrameSeal sender = new FrameSeal(KEY);
        byte[] first = SealedFrames.sealed(sender, MessageType.GET_BLOCK, 1, Payloads.utf8("a"));
        byte[] second = SealedFrames.sealed(sender, MessageType.GET_BLOCK, 2, Payloads.utf8("b"));
        EmbeddedChannel receiver = receiver(KEY, null);

        receiver.writeInbound(Unpooled.wrappedBuffer(first), Unpooled.wrappedBuffer(second));
        assertThat(((Frame) receiver.readInbound()).requestId()).isEqualTo(1);
        assertThat(((Frame) receiver.readInbound()).requestId()).isEqualTo(2);

        assertRefused(receiver, second, "failed its authentication");
    }

    @Test
    void framesOutOfOrderAreRefused() {
        FrameSeal sender = new FrameSeal(KEY);
        SealedFrames.sealed(sender, MessageType.GET_BLOCK, 1, Payloads.utf8("dropped"));
        byte[] second = SealedFrames.sealed(sender, MessageType.GET_BLOCK, 2, Payloads.utf8("b"));

        assertRefused(receiver(KEY, null), second, "failed its authentication");
    }

    @Test
    void anAlteredHeaderPayloadOrTagIsRefusedAndTheLentBufferGoesBack() {
        byte[] wire = encode(KEY, put("b-1", directBlock(BLOCK, 2)));
        int[] places = {7 /* request id */, Frame.HEADER_SIZE + 1 /* key length */, Frame.HEADER_SIZE + 5000,
                wire.length - 1 /* tag */};
        for (int place : places) {
            byte[] altered = wire.clone();
            altered[place] ^= 0x20;
            BlockBuffers buffers = new BlockBuffers(MAX_FRAME, 2);

            assertRefused(receiver(KEY, buffers), altered, "failed its authentication");
            assertThat(buffers.lent()).as("buffers lent after a refused frame altered at " + place).isZero();
        }
    }

    @Test
    void aFrameSealedWithAnotherKeyIsRefused() {
        assertRefused(receiver(KEY, null), encode(OTHER_KEY, put("b-1", directBlock(4096, 3))),
                "failed its authentication");
    }

    @Test
    void aBlockThatChangedAfterItsChecksumWasComputedIsRefusedThoughItOpens() {
        ByteBuffer block = directBlock(BLOCK, 4);
        int crc = crc(block);
        block.put(100, (byte) (block.get(100) ^ 1)); // the sender's memory, after the writer's checksum
        byte[] wire = encode(KEY, Payloads.putBlock("b-1", block, crc));
        BlockBuffers buffers = new BlockBuffers(MAX_FRAME, 2);

        assertRefused(receiver(KEY, buffers), wire, "failed its CRC32C check");
        assertThat(buffers.lent()).isZero();
    }

    @Test
    void aFrameTooLargeForThePoolOpensInTheHeap() {
        ByteBuffer block = directBlock(BLOCK, 5);
        BlockBuffers small = new BlockBuffers(BLOCK, 2); // no room for the key and the seal

        EmbeddedChannel receiver = receiver(KEY, small);
        receiver.writeInbound(Unpooled.wrappedBuffer(encode(KEY, put("b-1", block))));
        Frame frame = receiver.readInbound();

        assertThat(frame.block().isDirect()).isFalse();
        assertThat(frame.block()).isEqualTo(block);
        assertThat(small.lent()).isZero();
        receiver.finishAndReleaseAll();
    }

    // ------------------------------------------------------------------ helpers

    private static Frame put(String key, ByteBuffer block) {
        return Payloads.putBlock(key, block, crc(block));
    }

    /** The bytes a sealing encoder writes for {@code frame}. */
    private static byte[] encode(byte[] key, Frame frame) {
        FrameEncoder encoder = new FrameEncoder();
        encoder.sealWith(new FrameSeal(key));
        EmbeddedChannel channel = new EmbeddedChannel(encoder);
        channel.writeOutbound(frame);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ByteBuf encoded = channel.readOutbound(); encoded != null; encoded = channel.readOutbound()) {
            byte[] bytes = new byte[encoded.readableBytes()];
            encoded.readBytes(bytes);
            encoded.release();
            out.writeBytes(bytes);
        }
        channel.finishAndReleaseAll();
        return out.toByteArray();
    }

    /** A decoder past the handshake that opens frames with {@code key}, lending every block from {@code buffers}. */
    private static EmbeddedChannel receiver(byte[] key, BlockBuffers buffers) {
        FrameDecoder decoder = new FrameDecoder(MAX_FRAME, buffers, (type, id) -> buffers != null);
        decoder.authenticated(new FrameSeal(key));
        return new EmbeddedChannel(decoder);
    }

    private static void assertRefused(EmbeddedChannel receiver, byte[] wire, String why) {
        assertThatThrownBy(() -> receiver.writeInbound(Unpooled.wrappedBuffer(wire)))
                .isInstanceOf(DecoderException.class)
                .cause().isInstanceOf(CorruptFrameException.class).hasMessageContaining(why);
        assertThat((Object) receiver.readInbound()).isNull();
        receiver.finishAndReleaseAll();
    }

    private static ByteBuffer directBlock(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return ByteBuffer.allocateDirect(length).put(bytes).flip();
    }

    private static int crc(ByteBuffer block) {
        CRC32C crc = new CRC32C();
        crc.update(block.duplicate());
        return (int) crc.getValue();
    }

    private static byte[] bytes(ByteBuffer block, int from, int length) {
        byte[] bytes = new byte[length];
        block.get(from, bytes);
        return bytes;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
                return i;
            }
        }
        return -1;
    }
}
