package io.sr3.flink.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.List;
import java.util.zip.CRC32C;

/**
 * Turns bytes into {@link Frame}s, rejecting anything that breaks the format.
 *
 * <p>The length field is checked against the maximum frame size before a single payload byte is
 * buffered, so an oversized or hostile length can never make this side allocate it. After the
 * first violation the decoder discards all further input and the connection is closed by the
 * handler that sees the {@link CorruptFrameException}.
 */
final class FrameDecoder extends ByteToMessageDecoder {

    private final int maxFrameSize;
    private boolean broken;

    FrameDecoder(int maxFrameSize) {
        this.maxFrameSize = maxFrameSize;
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
            throw reject(ctx, in, String.format("bad magic 0x%08x, expected 0x%08x: not an sr3 peer", magic, Frame.MAGIC));
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
        if (length < 0 || length > maxFrameSize) {
            throw reject(ctx, in, "frame of " + length + " bytes exceeds the maximum of " + maxFrameSize
                    + " bytes (sr3.transport.max-frame-size)");
        }
        if (in.readableBytes() < Frame.HEADER_SIZE + length) {
            return;
        }
        int expectedCrc = in.getInt(start + 18);
        in.skipBytes(Frame.HEADER_SIZE);
        byte[] payload = new byte[length];
        in.readBytes(payload);
        CRC32C crc = new CRC32C();
        crc.update(payload);
        if ((int) crc.getValue() != expectedCrc) {
            throw reject(ctx, in, type + " frame payload failed its CRC32C check");
        }
        out.add(new Frame(type, requestId, payload));
    }

    private CorruptFrameException reject(ChannelHandlerContext ctx, ByteBuf in, String why) {
        broken = true;
        in.skipBytes(in.readableBytes());
        return new CorruptFrameException(String.valueOf(ctx.channel().remoteAddress()), why);
    }
}
