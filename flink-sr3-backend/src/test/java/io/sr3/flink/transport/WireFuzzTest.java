package io.sr3.flink.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random and mutated bytes through every decoder of the wire: each payload codec of {@link
 * Payloads}, {@link RelayRequest#decode} and the {@link FrameDecoder}. Each input must decode or
 * be refused with the decoder's typed error; see {@link Fuzzer} for what else fails a run and how
 * to replay one.
 */
class WireFuzzTest {

    private static final int MAX_FRAME = 64 * 1024;
    private static final byte[] SESSION_KEY = "fuzz session key, 32 bytes long!".getBytes(StandardCharsets.US_ASCII);
    private static final Predicate<Throwable> CORRUPT_FRAME =
            e -> e instanceof DecoderException && e.getCause() instanceof CorruptFrameException;

    // ------------------------------------------------------------------ payload codecs

    @Test
    void putBlockPayloads() throws Exception {
        List<byte[]> valid = new ArrayList<>();
        for (String key : keys()) {
            valid.add(Payloads.putBlock(key, new byte[0]));
            valid.add(Payloads.putBlock(key, bytes(key.length() * 7 + 3)));
        }
        Fuzzer.Result result = new Fuzzer("Payloads.putBlockKey/putBlockData").valid(valid).refusesWith(IllegalArgumentException.class)
                .run(p -> {
                    Payloads.putBlockKey(p);
                    Payloads.putBlockData(p);
                });
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    @Test
    void compareAndPutRequests() throws Exception {
        List<byte[]> valid = new ArrayList<>();
        for (String key : keys()) {
            valid.add(Payloads.compareAndPut(key, null, null));
            valid.add(Payloads.compareAndPut(key, null, bytes(40)));
            valid.add(Payloads.compareAndPut(key, new byte[0], null));
            valid.add(Payloads.compareAndPut(key, bytes(17), bytes(300)));
        }
        Fuzzer.Result result = new Fuzzer("Payloads.compareAndPut").valid(valid).refusesWith(IllegalArgumentException.class)
                .run(Payloads::compareAndPut);
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    @Test
    void compareAndPutAnswers() throws Exception {
        List<byte[]> valid = List.of(Payloads.swap(true, null), Payloads.swap(false, null), Payloads.swap(true, new byte[0]),
                Payloads.swap(false, bytes(64)), Payloads.swap(true, bytes(1000)));
        Fuzzer.Result result = new Fuzzer("Payloads.swapped/swapFound").valid(valid).refusesWith(IllegalArgumentException.class).run(p -> {
            Payloads.swapped(p);
            Payloads.swapFound(p);
        });
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    @Test
    void checkBlocksRequests() throws Exception {
        List<byte[]> valid = new ArrayList<>();
        valid.add(Payloads.checkBlocks(List.of()));
        List<Payloads.ExpectedBlock> blocks = new ArrayList<>();
        for (String key : keys()) {
            blocks.add(new Payloads.ExpectedBlock(key, key.length() * 11, key.hashCode()));
            valid.add(Payloads.checkBlocks(List.copyOf(blocks)));
        }
        new Fuzzer("Payloads.checkBlocks").valid(valid).refusesWith(IllegalArgumentException.class)
                .run(Payloads::checkBlocks);
    }

    @Test
    void checkBlocksAnswers() throws Exception {
        List<byte[]> valid = List.of(Payloads.blockStates(List.of()),
                Payloads.blockStates(List.of(new Payloads.BlockState(0, ""), new Payloads.BlockState(1, "not in /tmp/x"),
                        new Payloads.BlockState(2, "header says 5 bytes, file holds 3"))));
        new Fuzzer("Payloads.blockStates").valid(valid).refusesWith(IllegalArgumentException.class)
                .run(Payloads::blockStates);
    }

    @Test
    void stringLists() throws Exception {
        List<byte[]> valid = List.of(Payloads.stringList(List.of()), Payloads.stringList(List.of("")),
                Payloads.stringList(keys()), Payloads.stringList(List.of("a", "b", "c", "", "d")));
        Fuzzer.Result result = new Fuzzer("Payloads.stringList").valid(valid).refusesWith(IllegalArgumentException.class)
                .run(Payloads::stringList);
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    @Test
    void counterMaps() throws Exception {
        Map<String, Long> stats = new LinkedHashMap<>();
        stats.put("ringSize", 3L);
        stats.put("bytesStored", Long.MAX_VALUE);
        stats.put("", -1L);
        stats.put("repairPending", 0L);
        List<byte[]> valid = List.of(Payloads.longMap(Map.of()), Payloads.longMap(stats), Payloads.longMap(Map.of("x", 1L)));
        Fuzzer.Result result = new Fuzzer("Payloads.longMap").valid(valid).refusesWith(IllegalArgumentException.class).run(Payloads::longMap);
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    @Test
    void errorAnswers() throws Exception {
        List<byte[]> valid = new ArrayList<>();
        for (ErrorCode code : ErrorCode.values()) {
            valid.add(Payloads.error(code, code + ": no block b-1 on 127.0.0.1:6130"));
        }
        valid.add(Payloads.error(ErrorCode.INTERNAL, ""));
        valid.add(new byte[0]);
        Fuzzer.Result result = new Fuzzer("Payloads.errorCode/errorMessage").valid(valid).refusesWith(IllegalArgumentException.class).run(p -> {
            Payloads.errorCode(p);
            Payloads.errorMessage(p);
        });
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    @Test
    void utf8Payloads() throws Exception {
        List<byte[]> valid = new ArrayList<>();
        for (String key : keys()) {
            valid.add(Payloads.utf8(key));
        }
        Fuzzer.Result result = new Fuzzer("Payloads.utf8").valid(valid).refusesWith(IllegalArgumentException.class).run(Payloads::utf8);
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    // ------------------------------------------------------------------ relay requests

    @Test
    void relayRequests() throws Exception {
        List<String> longRoute = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            longRoute.add("10.0.0." + i + ":" + (6130 + i));
        }
        List<byte[]> valid = new ArrayList<>();
        for (String key : keys()) {
            valid.add(new RelayRequest(key, 0, 0, List.of()).encode());
            valid.add(new RelayRequest(key, 4 * 1024 * 1024, 0x1234abcd, List.of("127.0.0.1:6130")).encode());
        }
        valid.add(new RelayRequest("b-1", 17, -1, List.of("127.0.0.1:6130", "127.0.0.1:6131", "")).encode());
        valid.add(new RelayRequest("b-2", Integer.MAX_VALUE, 7, longRoute).encode());
        Fuzzer.Result result = new Fuzzer("RelayRequest.decode").valid(valid).refusesWith(IllegalArgumentException.class)
                .run(RelayRequest::decode);
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    // ------------------------------------------------------------------ frames

    @Test
    void framesBeforeAndAfterAHandshakeThatSealsThem() throws Exception {
        fuzzFrames("FrameDecoder (handshake, then sealed)", true);
    }

    @Test
    void framesBeforeAndAfterAHandshakeWithoutASecret() throws Exception {
        fuzzFrames("FrameDecoder (handshake, then clear)", false);
    }

    /**
     * Streams of frames as the server's decoder sees them: frames of at most {@link
     * FrameDecoder#HANDSHAKE_FRAME_SIZE} until an AUTH frame, then (as the server switches it)
     * frames up to the maximum, each sealed if {@code sealed}. Every stream arrives
     * in a random chunking.
     */
    private static void fuzzFrames(String target, boolean sealed) throws Exception {
        byte[] nonce = bytes(SharedSecret.NONCE_SIZE);
        byte[] auth = bytes(SharedSecret.NONCE_SIZE + SharedSecret.PROOF_SIZE);
        Frame challenge = new Frame(MessageType.CHALLENGE, 0, nonce);
        Frame authFrame = new Frame(MessageType.AUTH, 0, auth);
        Frame error = new Frame(MessageType.ERROR, 3, Payloads.error(ErrorCode.UNAUTHENTICATED, "handshake failed"));
        Frame largestBeforeHandshake = new Frame(MessageType.DATA, 1, bytes(FrameDecoder.HANDSHAKE_FRAME_SIZE));
        Frame put = new Frame(MessageType.PUT_BLOCK, 7, Payloads.putBlock("b-1", bytes(1000)));
        Frame get = new Frame(MessageType.GET_BLOCK, Long.MAX_VALUE, Payloads.utf8("b-1"));
        Frame stats = new Frame(MessageType.STATS, -1, new byte[0]);
        Frame large = new Frame(MessageType.DATA, 9, bytes(10_000));
        List<byte[]> valid = List.of(
                stream(sealed, challenge),
                stream(sealed, error),
                stream(sealed, largestBeforeHandshake),
                stream(sealed, challenge, get),
                stream(sealed, authFrame),
                stream(sealed, authFrame, get),
                stream(sealed, authFrame, put, stats, get),
                stream(sealed, authFrame, large));
        Fuzzer.Result result = new Fuzzer(target).valid(valid).refusesWith(CORRUPT_FRAME).run(input -> decodeStream(input, sealed));
        assertThat(result.decoded()).as(result.line()).isPositive();
    }

    /**
     * Writes {@code stream} into a fresh decoder in chunks chosen from the stream's hash (so the
     * input alone replays it). Fails if the decoder holds more bytes than the frame it waits for
     * may take, and, after it refused the stream, if it does anything but discard more input.
     */
    private static void decodeStream(byte[] stream, boolean sealed) {
        FrameDecoder decoder = new FrameDecoder(MAX_FRAME);
        ServerSide server = new ServerSide(decoder, sealed);
        EmbeddedChannel channel = new EmbeddedChannel(decoder, server);
        Random chunking = new Random(Arrays.hashCode(stream));
        int written = 0;
        try {
            while (written < stream.length) {
                int chunk = Math.min(stream.length - written, chunking.nextBoolean() ? 1 + chunking.nextInt(32)
                        : 1 + chunking.nextInt(stream.length));
                channel.writeInbound(Unpooled.wrappedBuffer(stream, written, chunk));
                written += chunk;
                long held = written - server.consumed;
                long mostItMayHold = Frame.HEADER_SIZE + server.maxFrame + server.sealSize;
                if (held >= mostItMayHold) {
                    throw new AssertionError("The frame decoder holds " + held + " bytes without a frame or an error; "
                            + "a frame with its header and seal takes at most " + mostItMayHold);
                }
            }
        } catch (DecoderException refused) {
            int frames = server.frames;
            byte[] more = Arrays.copyOfRange(stream, written, stream.length + 64);
            channel.writeInbound(Unpooled.wrappedBuffer(more)); // must neither throw nor decode again
            if (server.frames != frames) {
                throw new AssertionError("The frame decoder decoded a frame after it refused the stream");
            }
            throw refused;
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** What the server's handler does to the decoder: switches it at the first AUTH frame, and counts frames. */
    private static final class ServerSide extends ChannelInboundHandlerAdapter {
        private final FrameDecoder decoder;
        private final boolean sealed;
        int frames;
        long consumed;
        int maxFrame = FrameDecoder.HANDSHAKE_FRAME_SIZE;
        int sealSize;

        ServerSide(FrameDecoder decoder, boolean sealed) {
            this.decoder = decoder;
            this.sealed = sealed;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Frame frame = (Frame) msg;
            if (frame.payload().length > maxFrame) {
                throw new AssertionError("The frame decoder passed " + frame + " over its limit of " + maxFrame);
            }
            frames++;
            consumed += Frame.HEADER_SIZE + frame.payload().length + sealSize;
            if (frame.type() == MessageType.AUTH && maxFrame == FrameDecoder.HANDSHAKE_FRAME_SIZE) {
                decoder.authenticated(sealed ? new FrameSeal(SESSION_KEY) : null);
                maxFrame = MAX_FRAME;
                sealSize = sealed ? FrameSeal.OVERHEAD : 0;
            }
        }
    }

    /** The bytes a {@link FrameEncoder} writes for {@code frames}, sealing those after an AUTH frame if {@code sealed}. */
    private static byte[] stream(boolean sealed, Frame... frames) {
        FrameEncoder encoder = new FrameEncoder();
        EmbeddedChannel channel = new EmbeddedChannel(encoder);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Frame frame : frames) {
            channel.writeOutbound(frame);
            for (ByteBuf encoded = channel.readOutbound(); encoded != null; encoded = channel.readOutbound()) {
                byte[] bytes = new byte[encoded.readableBytes()];
                encoded.readBytes(bytes);
                encoded.release();
                out.writeBytes(bytes);
            }
            if (frame.type() == MessageType.AUTH && sealed) {
                encoder.sealWith(new FrameSeal(SESSION_KEY));
            }
        }
        channel.finishAndReleaseAll();
        return out.toByteArray();
    }

    // ------------------------------------------------------------------ seeds

    /** Block keys as the ring writes them, plus the boundaries: empty, multi-byte UTF-8, long. */
    private static List<String> keys() {
        return List.of("", "b-1", "job-7.chk-12.op-3.sst-000042.b-00017", "manifest.L2pvYi9jaGstMQ", "ключ-✓-€",
                "k".repeat(300));
    }

    /** Deterministic bytes that are not all zero. */
    private static byte[] bytes(int length) {
        byte[] bytes = new byte[length];
        new Random(length).nextBytes(bytes);
        return bytes;
    }
}
