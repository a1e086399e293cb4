package io.sr3.flink.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;

import javax.annotation.Nullable;
import javax.crypto.Cipher;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.List;

/**
 * Writes {@link Frame}s in the format documented there, sealed ({@link FrameSeal}) once the
 * connection's handshake established a session key ({@link #sealWith}). One per channel; runs on
 * its event loop.
 *
 * <p>A frame's block is not copied here: it goes out as slices of the caller's buffer of at most
 * {@link #SLICE_SIZE} bytes (a heap array's slices the transport copies into pooled direct
 * buffers as the socket takes them; a direct buffer's go to the socket as they are), or is
 * encrypted slice by slice into pooled direct buffers when sealed; its checksum is combined from
 * the one the frame carries rather than computed again. The block's buffer must stay unchanged
 * until the write completed.
 */
final class FrameEncoder extends MessageToMessageEncoder<Frame> {

    /** Small enough for the allocator's pooled size classes, large enough for few syscalls. */
    static final int SLICE_SIZE = 64 * 1024;

    /**
     * The block bytes encrypted at once when sealed: a multiple of 7,680 bytes, the stride of the
     * JDK's fused AES-GCM intrinsic, which leaves whatever is left of each call to slower separate
     * AES-CTR and GHASH passes.
     */
    static final int SEALED_SLICE_SIZE = 8 * 7680;

    @Nullable private FrameSeal seal;

    FrameEncoder() {
        super(Frame.class);
    }

    /** Seals every frame written after this call; called on the event loop, after the last clear frame was written. */
    void sealWith(@Nullable FrameSeal frameSeal) {
        this.seal = frameSeal;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame frame, List<Object> out) throws GeneralSecurityException {
        byte[] head = frame.head();
        ByteBuffer block = frame.block();
        int blockLength = block.remaining();
        int crc = Crc32c.combine(Crc32c.of(head), frame.blockCrc(), blockLength);
        ByteBuf header = ctx.alloc().buffer(Frame.HEADER_SIZE + head.length + (seal == null ? 0 : FrameSeal.TAG_SIZE));
        header.writeInt(Frame.MAGIC);
        header.writeByte(Frame.VERSION);
        header.writeByte(frame.type().code());
        header.writeLong(frame.requestId());
        header.writeInt(frame.length());
        if (seal != null) {
            header.writeInt(0); // the checksum travels sealed
            encodeSealed(ctx, header, head, block, crc, out);
            return;
        }
        header.writeInt(crc);
        header.writeBytes(head);
        out.add(header);
        int start = block.position();
        for (int offset = 0; offset < blockLength; offset += SLICE_SIZE) {
            out.add(Unpooled.wrappedBuffer(slice(block, start + offset)));
        }
    }

    private void encodeSealed(ChannelHandlerContext ctx, ByteBuf header, byte[] head, ByteBuffer block, int crc,
            List<Object> out) throws GeneralSecurityException {
        Cipher cipher = seal.sealNext(header.nioBuffer(0, Frame.HEADER_SIZE));
        encrypt(cipher, ByteBuffer.wrap(head), header, false);
        out.add(header);
        // The first slice also completes the cipher block the head left open, so that every
        // later slice starts on a cipher block and is a whole number of the intrinsic's strides.
        int from = block.position();
        int sliceLength = (16 - head.length % 16) % 16 + SEALED_SLICE_SIZE;
        while (from < block.limit()) {
            int to = Math.min(block.limit(), from + sliceLength);
            ByteBuffer slice = block.duplicate().position(from).limit(to);
            ByteBuf sealed = ctx.alloc().directBuffer(cipher.getOutputSize(slice.remaining()));
            encrypt(cipher, slice, sealed, false);
            out.add(sealed);
            from = to;
            sliceLength = SEALED_SLICE_SIZE;
        }
        ByteBuf trailer = ctx.alloc().directBuffer(cipher.getOutputSize(Integer.BYTES));
        encrypt(cipher, FrameSeal.crcBytes(crc), trailer, true);
        out.add(trailer);
    }

    /** Encrypts {@code input} into {@code target} after its written bytes (finishing the frame if {@code last}). */
    private static void encrypt(Cipher cipher, ByteBuffer input, ByteBuf target, boolean last)
            throws GeneralSecurityException {
        int needed = cipher.getOutputSize(input.remaining());
        target.ensureWritable(needed);
        ByteBuffer into = target.nioBuffer(target.writerIndex(), needed);
        int written = last ? cipher.doFinal(input, into) : cipher.update(input, into);
        target.writerIndex(target.writerIndex() + written);
    }

    private static ByteBuffer slice(ByteBuffer block, int from) {
        return block.duplicate().position(from).limit(Math.min(from + SLICE_SIZE, block.limit()));
    }
}
