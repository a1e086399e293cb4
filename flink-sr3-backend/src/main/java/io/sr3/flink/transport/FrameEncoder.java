package io.sr3.flink.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;

import javax.annotation.Nullable;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Writes {@link Frame}s in the format documented there, each followed by its MAC once the
 * connection's handshake established one ({@link #authenticateWith}). One per channel; runs on
 * its event loop.
 *
 * <p>A frame's block is not copied here: it goes out as slices of the caller's array of at most
 * {@link #SLICE_SIZE} bytes, which the transport copies into pooled direct buffers as the socket
 * takes them, and its checksum is combined from the one the frame carries rather than computed
 * again.
 */
final class FrameEncoder extends MessageToMessageEncoder<Frame> {

    /** Small enough for the allocator's pooled size classes, large enough for few syscalls. */
    static final int SLICE_SIZE = 64 * 1024;

    @Nullable private FrameMac mac;

    FrameEncoder() {
        super(Frame.class);
    }

    /** Signs every frame written after this call; called on the event loop, after the last unsigned frame was written. */
    void authenticateWith(@Nullable FrameMac frameMac) {
        this.mac = frameMac;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame frame, List<Object> out) {
        byte[] head = frame.head();
        byte[] block = frame.block();
        int crc = Crc32c.combine(Crc32c.of(head), frame.blockCrc(), block.length);
        ByteBuf header = ctx.alloc().buffer(Frame.HEADER_SIZE + head.length);
        header.writeInt(Frame.MAGIC);
        header.writeByte(Frame.VERSION);
        header.writeByte(frame.type().code());
        header.writeLong(frame.requestId());
        header.writeInt(frame.length());
        header.writeInt(crc);
        header.writeBytes(head);
        out.add(header);
        for (int offset = 0; offset < block.length; offset += SLICE_SIZE) {
            out.add(Unpooled.wrappedBuffer(block, offset, Math.min(SLICE_SIZE, block.length - offset)));
        }
        if (mac != null) {
            out.add(Unpooled.wrappedBuffer(mac.next(header.nioBuffer(), ByteBuffer.wrap(block))));
        }
    }
}
