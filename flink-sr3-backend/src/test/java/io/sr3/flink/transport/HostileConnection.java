package io.sr3.flink.transport;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.MemberCodec;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;
import javax.crypto.AEADBadTagException;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One raw connection that attacks a live node with random or mutated bytes ({@link Attack}) and
 * checks what the node does: {@link #run} throws an {@link AssertionError} if the node sent
 * anything but well-formed frames, left a request unanswered, or left the connection open past
 * its handshake or idle deadline. Used by one thread.
 */
@NotThreadSafe
final class HostileConnection {

    /**
     * The node under attack and what it promises.
     *
     * @param secret the ring's shared secret, for the attacks that first complete a real handshake
     * @param slack what a loaded machine may add to one of the node's deadlines before it counts as missed
     */
    record Target(RingNode node, String secret, Duration handshakeTimeout, Duration idleTimeout, Duration slack) {}

    /** What one hostile connection does. */
    enum Attack {
        /** Random bytes (or a foreign protocol's greeting, mutated) before reading anything. */
        JUNK_BEFORE_CHALLENGE,
        /** A header with the right magic and version, a random type and length, then junk. */
        HEADER_THEN_JUNK,
        /** The CHALLENGE is read, then a correctly signed AUTH frame, mutated, is sent. */
        MUTATED_AUTH,
        /** After a real handshake: requests with mutated payloads, validly sealed. Each must be answered. */
        MUTATED_REQUESTS,
        /** After a real handshake: a sealed request frame whose bytes (header, sealed payload, tag) are mutated. */
        MUTATED_SIGNED_FRAME
    }

    /** The largest frame accepted from the node: far above any answer to these requests. */
    private static final int MAX_ANSWER = 1 << 20;

    private static final List<MessageType> REQUEST_TYPES = List.of(MessageType.PUT_BLOCK, MessageType.GET_BLOCK,
            MessageType.DELETE_BLOCK, MessageType.LIST_KEYS, MessageType.STATS, MessageType.PING,
            MessageType.RELAY_BLOCK, MessageType.COMPARE_AND_PUT, MessageType.CHECK_BLOCKS);

    private final Target target;
    private final RingNode node;
    final Attack attack;
    private final Mutator mutator;
    /** Every byte this connection sent, for the failure report. */
    final ByteArrayOutputStream sent = new ByteArrayOutputStream();
    private final SharedSecret secret;
    private Socket socket;
    private InputStream in;
    private OutputStream out;
    private long connectedNanos;
    private long lastSentNanos;
    private boolean authenticated;
    @Nullable private FrameSeal sendSeal;
    @Nullable private FrameSeal receiveSeal;
    @Nullable private byte[] serverNonce;
    @Nullable private byte[] clientNonce;
    /** Requests the node answered. */
    int answers;
    /** Sent less than a frame header before the handshake: only the handshake deadline can end it. */
    boolean stalls;

    HostileConnection(Target target, Attack attack, Random random) {
        this.target = target;
        this.node = target.node();
        this.secret = new SharedSecret(target.secret());
        this.attack = attack;
        this.mutator = new Mutator(random);
    }

    /** Connects, attacks, and reads what the node answers until it closes the connection (or, for requests, answers them all). */
    void run() throws IOException {
        socket = new Socket();
        try {
            socket.connect(node.self().address(), (int) target.slack().toMillis());
            connectedNanos = System.nanoTime();
            in = socket.getInputStream();
            out = socket.getOutputStream();
            switch (attack) {
                case JUNK_BEFORE_CHALLENGE -> {
                    byte[] junk = junk();
                    stalls = junk.length < Frame.HEADER_SIZE;
                    send(junk);
                }
                case HEADER_THEN_JUNK -> send(headerThenJunk());
                case MUTATED_AUTH -> {
                    expectChallenge();
                    clientNonce = SharedSecret.newNonce();
                    send(mutator.mutate(frame(MessageType.AUTH, 0, secret.clientAuth(serverNonce, clientNonce))));
                }
                case MUTATED_REQUESTS -> {
                    handshake();
                    mutatedRequests();
                    return; // every request answered: the connection may stay, the client closes it
                }
                case MUTATED_SIGNED_FRAME -> {
                    handshake();
                    byte[] request = sealedFrame(MessageType.GET_BLOCK, 1, Payloads.utf8("fuzz-1"));
                    send(mutator.mutate(request));
                }
            }
            expectFramesThenClose();
        } finally {
            socket.close();
        }
    }

    /** Random bytes, or a TLS ClientHello, HTTP request or SSH banner, mutated: what a wrong client sends. */
    private byte[] junk() {
        List<byte[]> foreign = List.of(
                Mutator.unhex("16030100a5010000a10303"), // a TLS 1.2 ClientHello's first bytes
                "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
                "SSH-2.0-OpenSSH_9.6\r\n".getBytes(StandardCharsets.US_ASCII),
                ByteBuffer.allocate(4).putInt(Frame.MAGIC).array());
        return mutator.next(foreign);
    }

    private byte[] headerThenJunk() {
        Random random = mutator.random();
        MessageType[] types = MessageType.values();
        int type = random.nextInt(4) == 0 ? random.nextInt(256) : types[random.nextInt(types.length)].code();
        int[] lengths = {0, 1, 64, FrameDecoder.HANDSHAKE_FRAME_SIZE, FrameDecoder.HANDSHAKE_FRAME_SIZE + 1,
                node.config().maxFrameSize(), Integer.MAX_VALUE, -1, random.nextInt()};
        ByteBuffer header = ByteBuffer.allocate(Frame.HEADER_SIZE).putInt(Frame.MAGIC).put(Frame.VERSION)
                .put((byte) type).putLong(random.nextLong()).putInt(lengths[random.nextInt(lengths.length)])
                .putInt(random.nextInt());
        byte[] junk = mutator.randomBytes(Mutator.MAX_RANDOM_LENGTH);
        return ByteBuffer.allocate(header.capacity() + junk.length).put(header.array()).put(junk).array();
    }

    private void handshake() throws IOException {
        expectChallenge();
        clientNonce = SharedSecret.newNonce();
        send(frame(MessageType.AUTH, 0, secret.clientAuth(serverNonce, clientNonce)));
        Frame ok = receive(connectedNanos + target.handshakeTimeout().plus(target.slack()).toNanos());
        if (ok == null || ok.type() != MessageType.AUTH_OK
                || !secret.acceptsServerProof(serverNonce, clientNonce, ok.payload())) {
            throw new AssertionError("A correct AUTH was answered " + ok);
        }
        authenticated = true;
        sendSeal = secret.clientToServer(serverNonce, clientNonce);
        receiveSeal = secret.serverToClient(serverNonce, clientNonce);
    }

    private void expectChallenge() throws IOException {
        Frame challenge = receive(connectedNanos + target.slack().toNanos());
        if (challenge == null || challenge.type() != MessageType.CHALLENGE
                || challenge.payload().length != SharedSecret.NONCE_SIZE) {
            throw new AssertionError("Expected a CHALLENGE of " + SharedSecret.NONCE_SIZE + " bytes, got " + challenge);
        }
        serverNonce = challenge.payload();
    }

    /** Sends 1..8 signed requests with mutated payloads; every one must be answered, in any order. */
    private void mutatedRequests() throws IOException {
        Random random = mutator.random();
        int count = 1 + random.nextInt(8);
        Set<Long> pending = new HashSet<>();
        for (int i = 0; i < count; i++) {
            MessageType type = random.nextInt(8) == 0
                    ? MessageType.values()[random.nextInt(MessageType.values().length)]
                    : REQUEST_TYPES.get(random.nextInt(REQUEST_TYPES.size()));
            long requestId = 1000L + i;
            send(sealedFrame(type, requestId, mutator.next(validPayloads(type))));
            pending.add(requestId);
        }
        long deadline = lastSentNanos + node.config().requestTimeout().plus(target.slack()).toNanos();
        while (!pending.isEmpty()) {
            Frame answer = receive(deadline);
            if (answer == null) {
                throw new AssertionError("The node closed the connection with requests " + pending
                        + " unanswered; every request was validly sealed");
            }
            if (!answer.type().isResponse() || !pending.remove(answer.requestId())) {
                throw new AssertionError("Unexpected answer " + answer + " while waiting for " + pending);
            }
            answers++;
        }
    }

    /** Reads well-formed frames until the node closes the connection, which it must do within its deadlines. */
    private void expectFramesThenClose() throws IOException {
        while (true) {
            long deadline = authenticated
                    ? lastSentNanos + target.idleTimeout().plus(target.slack()).toNanos()
                    : connectedNanos + target.handshakeTimeout().plus(target.slack()).toNanos();
            Frame frame = receive(deadline);
            if (frame == null) {
                return;
            }
            if (frame.type() == MessageType.CHALLENGE && serverNonce == null) {
                serverNonce = frame.payload(); // the attack did not wait for it
            } else if (frame.type() == MessageType.AUTH_OK && !authenticated) {
                // A mutation the handshake does not see (the request id of the AUTH frame): that is fine.
                authenticated = true;
                receiveSeal = secret.serverToClient(serverNonce, clientNonce);
            } else if (frame.type() != MessageType.ERROR && !(authenticated && frame.type().isResponse())) {
                throw new AssertionError("Unexpected " + frame + " from the node");
            }
        }
    }

    /**
     * The next frame from the node, its CRC32C and (once authenticated) seal verified; null if the
     * node closed the connection (at a frame boundary or, when it closed while writing, inside one).
     *
     * @throws AssertionError if the connection is still open at {@code deadlineNanos}, or the
     *     node sent something that is not a frame
     */
    @Nullable
    private Frame receive(long deadlineNanos) throws IOException {
        byte[] header = new byte[Frame.HEADER_SIZE];
        if (!readFully(header, deadlineNanos)) {
            return null;
        }
        ByteBuffer h = ByteBuffer.wrap(header);
        int magic = h.getInt();
        byte version = h.get();
        MessageType type = MessageType.fromCode(h.get() & 0xFF);
        long requestId = h.getLong();
        int length = h.getInt();
        int crc = h.getInt();
        if (magic != Frame.MAGIC || version != Frame.VERSION || type == null || length < 0 || length > MAX_ANSWER) {
            throw new AssertionError("The node sent a malformed frame header " + Mutator.hex(header));
        }
        byte[] payload = new byte[length + (receiveSeal == null ? 0 : FrameSeal.OVERHEAD)];
        if (!readFully(payload, deadlineNanos)) {
            return null;
        }
        if (receiveSeal != null) {
            try {
                payload = SealedFrames.open(receiveSeal, header, payload);
            } catch (AEADBadTagException e) {
                throw new AssertionError("The node sent a " + type + " frame that does not open: " + e.getMessage());
            }
        } else if (SealedFrames.crc(payload) != crc) {
            throw new AssertionError("The node sent a " + type + " frame with a wrong CRC32C");
        }
        return new Frame(type, requestId, payload);
    }

    /** Fills {@code bytes}; false if the node closed the connection first. */
    private boolean readFully(byte[] bytes, long deadlineNanos) throws IOException {
        int filled = 0;
        while (filled < bytes.length) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (left <= 0) {
                throw stillOpen();
            }
            socket.setSoTimeout((int) left);
            int read;
            try {
                read = in.read(bytes, filled, bytes.length - filled);
            } catch (SocketTimeoutException e) {
                throw stillOpen();
            } catch (SocketException reset) {
                return false;
            }
            if (read < 0) {
                return false;
            }
            filled += read;
        }
        return true;
    }

    private AssertionError stillOpen() {
        return new AssertionError("The node left the connection open " + (authenticated
                ? "for more than " + target.idleTimeout().plus(target.slack()) + " after its last frame (idle timeout " + target.idleTimeout() + ")"
                : "for more than " + target.handshakeTimeout().plus(target.slack()) + " without a handshake (handshake timeout "
                        + target.handshakeTimeout() + ")"));
    }

    private void send(byte[] bytes) throws IOException {
        sent.writeBytes(bytes);
        try {
            out.write(bytes);
            out.flush();
        } catch (SocketException closedWhileWriting) {
            // The node closed the connection at a header it refused: the rest does not matter.
        }
        lastSentNanos = System.nanoTime();
    }

    private byte[] sealedFrame(MessageType type, long requestId, byte[] payload) {
        return SealedFrames.sealed(sendSeal, type, requestId, payload);
    }

    private List<byte[]> validPayloads(MessageType type) {
        byte[] data = new byte[1 + mutator.random().nextInt(2000)];
        mutator.random().nextBytes(data);
        return switch (type) {
            case PUT_BLOCK -> List.of(Payloads.putBlock("fuzz-1", data), Payloads.putBlock("fuzz-2", new byte[0]));
            case GET_BLOCK, DELETE_BLOCK -> List.of(Payloads.utf8("fuzz-1"), Payloads.utf8("fuzz-missing"));
            case LIST_KEYS -> List.of(Payloads.utf8("fuzz-"), new byte[0]);
            // A claimed record is pinged: its host must not resolve, or a mutated port could reach another process.
            case PING -> List.of(new byte[0], MemberCodec.encode(new Member("n-fuzz", "fuzz.invalid", 6130, "")));
            case RELAY_BLOCK -> List.of(new RelayRequest("fuzz-1", data.length, 0, List.of()).encode(),
                    new RelayRequest("fuzz-1", 10, 0, List.of(node.self().id())).encode());
            case COMPARE_AND_PUT -> List.of(Payloads.compareAndPut("fuzz-3", null, data),
                    Payloads.compareAndPut("fuzz-3", data, null));
            default -> List.of(new byte[0], data);
        };
    }

    /** A clear frame, as {@link FrameEncoder} writes it before the handshake. */
    private static byte[] frame(MessageType type, long requestId, byte[] payload) {
        return SealedFrames.clear(type, requestId, payload);
    }
}
