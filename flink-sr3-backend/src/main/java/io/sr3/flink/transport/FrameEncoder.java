package io.sr3.flink.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

import javax.annotation.Nullable;

import java.util.zip.CRC32C;

/**
 * Writes {@link Frame}s in the format documented there, each followed by its MAC once the
 * connection's handshake established one ({@link #authenticateWith}). One per channel; runs on
 * its event loop.
 */
final class FrameEncoder extends MessageToByteEncoder<Frame> {

    @Nullable private FrameMac mac;

    /** Signs every frame written after this call; called on the event loop, after the last unsigned frame was written. */
    void authenticateWith(@Nullable FrameMac frameMac) {
        this.mac = frameMac;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame frame, ByteBuf out) {
        byte[] payload = frame.payload();
        CRC32C crc = new CRC32C();
        crc.update(payload);
        int start = out.writerIndex();
        out.ensureWritable(Frame.HEADER_SIZE + payload.length + (mac == null ? 0 : FrameMac.SIZE));
        out.writeInt(Frame.MAGIC);
        out.writeByte(Frame.VERSION);
        out.writeByte(frame.type().code());
        out.writeLong(frame.requestId());
        out.writeInt(payload.length);
        out.writeInt((int) crc.getValue());
        out.writeBytes(payload);
        if (mac != null) {
            out.writeBytes(mac.next(out.slice(start, out.writerIndex() - start)));
        }
    }
}
