package io.sr3.flink.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import javax.annotation.Nullable;
import javax.crypto.AEADBadTagException;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Turns bytes into {@link Frame}s, rejecting anything that breaks the format.
 *
 * <p>The length field is checked against the maximum frame size before a single payload byte is
 * buffered, so an oversized or hostile length can never make this side allocate it. Until the
 * handshake completed ({@link #authenticated}) the maximum is {@link #HANDSHAKE_FRAME_SIZE}: an
 * unauthenticated peer cannot make this side buffer more. Once the handshake established a
 * session key, every frame must be sealed with it ({@link FrameSeal}). After the first violation
 * the decoder discards all further input and the connection is closed by the handler that sees
 * the {@link CorruptFrameException}.
 *
 * <p>The block of a frame that {@link Lending} names (a block answer the request asked for; a
 * server's PUT) is copied, and checksummed on the way (or opened in place, when sealed), into a
 * buffer lent by the node's {@link BlockBuffers}: a direct one the consumer gives back, not a
 * block-sized heap array. Every other payload lands in heap arrays.
 */
final class FrameDecoder extends ByteToMessageDecoder {

    /** The largest frame accepted before the handshake: handshake frames and error answers are far smaller. */
    static final int HANDSHAKE_FRAME_SIZE = 4096;

    private final int maxFrameSize;
    @Nullable private final BlockBuffers blockBuffers;
    private final Lending lending;
    private int currentMaxFrameSize = HANDSHAKE_FRAME_SIZE;
    @Nullable private FrameSeal seal;
    private boolean broken;

    /** Which frames get their block in a buffer lent by the decoder's {@link BlockBuffers}. */
    @FunctionalInterface
    interface Lending {
        Lending NONE = (type, requestId) -> false;

        boolean lendsBlockOf(MessageType type, long requestId);
    }

    FrameDecoder(int maxFrameSize) {
        this(maxFrameSize, null, Lending.NONE);
    }

    FrameDecoder(int maxFrameSize, @Nullable BlockBuffers blockBuffers, Lending lending) {
        this.maxFrameSize = maxFrameSize;
        this.blockBuffers = blockBuffers;
        this.lending = lending;
        // Received buffers are kept as they came, not merged into one growing buffer: a large
        // frame is copied once, into its arrays.
        setCumulator(COMPOSITE_CUMULATOR);
    }

    /** The handshake succeeded: frames up to the configured maximum, each opened with {@code frameSeal} if not null. */
    void authenticated(@Nullable FrameSeal frameSeal) {
        this.currentMaxFrameSize = maxFrameSize;
        this.seal = frameSeal;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
            throws CorruptFrameException {
        if (broken) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (in.readableBytes() < Frame.HEADER_SIZE) {
            return;
        }
        int start = in.readerIndex();
        int magic = in.getInt(start);
        if (magic != Frame.MAGIC) {
            throw reject(ctx, in, String.format("bad magic 0x%08x, expected 0x%08x: not an sr3 peer (or a TLS peer "
                    + "talking to a node without TLS)", magic, Frame.MAGIC));
        }
        byte version = in.getByte(start + 4);
        if (version < Frame.LOWEST_COMPATIBLE_VERSION || version > Frame.VERSION) {
            throw reject(ctx, in, "unsupported protocol version " + version + ", this node speaks "
                    + Frame.LOWEST_COMPATIBLE_VERSION + ".." + Frame.VERSION);
        }
        MessageType type = MessageType.fromCode(in.getUnsignedByte(start + 5));
        if (type == null) {
            throw reject(ctx, in, "unknown message type " + in.getUnsignedByte(start + 5));
        }
        long requestId = in.getLong(start + 6);
        int length = in.getInt(start + 14);
        if (length < 0 || length > currentMaxFrameSize) {
            throw reject(ctx, in, currentMaxFrameSize == maxFrameSize
                    ? "frame of " + length + " bytes exceeds the maximum of " + maxFrameSize
                            + " bytes (sr3.transport.max-frame-size)"
                    : "frame of " + length + " bytes before the handshake completed (at most "
                            + HANDSHAKE_FRAME_SIZE + ")");
        }
        if (seal != null) {
            if (in.readableBytes() < Frame.HEADER_SIZE + length + FrameSeal.OVERHEAD) {
                return;
            }
            decodeSealed(ctx, in, type, requestId, length, out);
            return;
        }
        if (in.readableBytes() < Frame.HEADER_SIZE + length) {
            return;
        }
        int expectedCrc = in.getInt(start + 18);
        int payloadStart = start + Frame.HEADER_SIZE;
        int headLength = headLength(type, length, length >= 2 ? in.getUnsignedShort(payloadStart) : 0);
        byte[] head = new byte[headLength];
        int headCrc = copy(in, payloadStart, ByteBuffer.wrap(head));
        int blockLength = length - headLength;
        boolean lent = lends(type, requestId);
        ByteBuffer block = lent ? blockBuffers.acquire(blockLength) : ByteBuffer.allocate(blockLength);
        int blockCrc = copy(in, payloadStart + headLength, block);
        if (Crc32c.combine(headCrc, blockCrc, blockLength) != expectedCrc) {
            if (lent) {
                blockBuffers.release(block);
            }
            throw reject(ctx, in, type + " frame payload failed its CRC32C check");
        }
        in.skipBytes(Frame.HEADER_SIZE + length);
        out.add(new Frame(type, requestId, head, block, blockCrc));
    }

    /**
     * Copies a sealed frame's payload, checksum and tag into one buffer (lent by the node's
     * {@link BlockBuffers} if the frame's block is to be), opens it there in place, and hands on
     * the block where it lies in that buffer; the head is copied out.
     */
    private void decodeSealed(ChannelHandlerContext ctx, ByteBuf in, MessageType type, long requestId, int length,
            List<Object> out) throws CorruptFrameException {
        int start = in.readerIndex();
        int sealedLength = length + FrameSeal.OVERHEAD;
        boolean lent = lends(type, requestId);
        ByteBuffer buffer = lent ? blockBuffers.acquire(sealedLength) : ByteBuffer.allocate(sealedLength);
        int position = buffer.position();
        for (ByteBuffer part : in.nioBuffers(start + Frame.HEADER_SIZE, sealedLength)) {
            buffer.put(part);
        }
        buffer.position(position);
        int sealedCrc;
        try {
            sealedCrc = seal.openNext(in.nioBuffer(start, Frame.HEADER_SIZE), buffer);
        } catch (AEADBadTagException e) {
            if (lent) {
                blockBuffers.release(buffer);
            }
            throw reject(ctx, in, type + " frame failed its authentication (AES-GCM tag): altered, injected, "
                    + "replayed or sealed with another key");
        }
        int headLength = headLength(type, length, length >= 2 ? Short.toUnsignedInt(buffer.getShort(position)) : 0);
        byte[] head = new byte[headLength];
        buffer.get(position, head);
        CRC32C crc = new CRC32C();
        ByteBuffer block = buffer.position(position + headLength).limit(position + length);
        crc.update(block.duplicate());
        int blockCrc = (int) crc.getValue();
        if (Crc32c.combine(Crc32c.of(head), blockCrc, length - headLength) != sealedCrc) {
            if (lent) {
                blockBuffers.release(buffer);
            }
            throw reject(ctx, in, type + " frame payload failed its CRC32C check (it was sealed as sent: the "
                    + "sender's copy changed after its checksum was computed)");
        }
        in.skipBytes(Frame.HEADER_SIZE + sealedLength);
        out.add(new Frame(type, requestId, head, block, blockCrc));
    }

    private boolean lends(MessageType type, long requestId) {
        return blockBuffers != null && lending.lendsBlockOf(type, requestId);
    }

    /**
     * Where a frame's block starts: after the key of a {@link MessageType#PUT_BLOCK} (whose first
     * two bytes, {@code keyLength}, give the key's length), at the start of a {@link
     * MessageType#DATA} answer (which may hold a block); other frames have none. A key length that
     * does not fit leaves the whole payload in the head, where the request's handler rejects it.
     */
    private static int headLength(MessageType type, int length, int keyLength) {
        if (type == MessageType.DATA) {
            return 0;
        }
        if (type == MessageType.PUT_BLOCK && length >= 2) {
            int keyed = 2 + keyLength;
            return keyed <= length ? keyed : length;
        }
        return length;
    }

    /**
     * Copies {@code target.remaining()} bytes from {@code index} into {@code target} (whose
     * position stays), one received buffer at a time, and checksums each part while it is still
     * in the cache.
     */
    private static int copy(ByteBuf in, int index, ByteBuffer target) {
        CRC32C crc = new CRC32C();
        int start = target.position();
        for (ByteBuffer part : in.nioBuffers(index, target.remaining())) {
            int from = target.position();
            target.put(part);
            crc.update(target.duplicate().limit(target.position()).position(from)); // while still in the cache
        }
        target.position(start);
        return (int) crc.getValue();
    }

    private CorruptFrameException reject(ChannelHandlerContext ctx, ByteBuf in, String why) {
        broken = true;
        in.skipBytes(in.readableBytes());
        return new CorruptFrameException(String.valueOf(ctx.channel().remoteAddress()), why);
    }
}
