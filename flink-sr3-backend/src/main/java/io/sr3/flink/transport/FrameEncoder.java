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
 * <p>A frame's block is not copied here: it goes out as slices of the caller's buffer of at most
 * {@link #SLICE_SIZE} bytes (a heap array's slices the transport copies into pooled direct
 * buffers as the socket takes them; a direct buffer's go to the socket as they are), and its
 * checksum is combined from the one the frame carries rather than computed again. The block's
 * buffer must stay unchanged until the write completed.
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
        ByteBuffer block = frame.block();
        int blockLength = block.remaining();
        int crc = Crc32c.combine(Crc32c.of(head), frame.blockCrc(), blockLength);
        ByteBuf header = ctx.alloc().buffer(Frame.HEADER_SIZE + head.length);
        header.writeInt(Frame.MAGIC);
        header.writeByte(Frame.VERSION);
        header.writeByte(frame.type().code());
        header.writeLong(frame.requestId());
        header.writeInt(frame.length());
        header.writeInt(crc);
        header.writeBytes(head);
        out.add(header);
        int start = block.position();
        for (int offset = 0; offset < blockLength; offset += SLICE_SIZE) {
            out.add(Unpooled.wrappedBuffer(block.duplicate().position(start + offset)
                    .limit(start + offset + Math.min(SLICE_SIZE, blockLength - offset))));
        }
        if (mac != null) {
            out.add(Unpooled.wrappedBuffer(mac.next(header.nioBuffer(), block.duplicate())));
        }
    }
}
