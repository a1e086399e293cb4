package io.sr3.flink.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

import java.util.zip.CRC32C;

/** Writes {@link Frame}s in the format documented there. Stateless, shared by all channels. */
@ChannelHandler.Sharable
final class FrameEncoder extends MessageToByteEncoder<Frame> {

    static final FrameEncoder INSTANCE = new FrameEncoder();

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame frame, ByteBuf out) {
        byte[] payload = frame.payload();
        CRC32C crc = new CRC32C();
        crc.update(payload);
        out.ensureWritable(Frame.HEADER_SIZE + payload.length);
        out.writeInt(Frame.MAGIC);
        out.writeByte(Frame.VERSION);
        out.writeByte(frame.type().code());
        out.writeLong(frame.requestId());
        out.writeInt(payload.length);
        out.writeInt((int) crc.getValue());
        out.writeBytes(payload);
    }
}
