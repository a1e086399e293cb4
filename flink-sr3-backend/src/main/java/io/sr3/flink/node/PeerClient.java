package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.MemberCodec;
import io.sr3.flink.ring.Membership;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.transport.BlockBuffers;
import io.sr3.flink.transport.Crc32c;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.Frame;
import io.sr3.flink.transport.MeasuredLink;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.Payloads;
import io.sr3.flink.transport.RelayRequest;
import io.sr3.flink.transport.TransportClient;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * The client side of a ring node: one request to one node at a time. A request addressed to this
 * node itself skips the network and runs against its store on the I/O pool, so callers need not
 * tell the two apart. Replication across nodes is {@link RingStorage}'s.
 */
@ThreadSafe
final class PeerClient {

    private final Member self;
    private final boolean clientRole;
    private final Duration requestTimeout;
    private final BlockStore store;
    private final Membership membership;
    private final TransportClient transport;
    private final BlockBuffers blockBuffers;
    private final ExecutorService io;
    private final BooleanSupplier running;
    private final LongSupplier nanoClock;
    private final Consumer<Transfer> transfers;
    /** What each direction of each link delivers, by direction and peer id. */
    private final Map<String, DeliveryRate> links = new ConcurrentHashMap<>();

    /**
     * @param blockBuffers the buffers {@code transport} receives blocks into, which relays read
     *     this node's own blocks into as well
     * @param transfers told of every block read from another node or sent to one, for the
     *     estimates of the links (see {@link LinkObservations#onTransfer})
     */
    PeerClient(Member self, NodeConfig config, BlockStore store, Membership membership, TransportClient transport,
            BlockBuffers blockBuffers, ExecutorService io, BooleanSupplier running, LongSupplier nanoClock,
            Consumer<Transfer> transfers) {
        this.blockBuffers = blockBuffers;
        this.self = self;
        this.clientRole = config.role() == RingRole.CLIENT;
        this.requestTimeout = config.requestTimeout();
        this.store = store;
        this.membership = membership;
        this.transport = transport;
        this.io = io;
        this.running = running;
        this.nanoClock = nanoClock;
        this.transfers = transfers;
    }

    /**
     * Runs {@code request}, a block of {@code bytes} read from {@code peer} or sent to it, and
     * reports it once answered. Reads and sends are counted apart: they share no direction.
     */
    private <T> CompletableFuture<T> timed(Member peer, Transfer.Direction direction, long bytes,
            Supplier<CompletableFuture<T>> request) {
        return timed(peer, direction, bytes, request, answer -> 0);
    }

    /**
     * {@link #timed}, with {@code peerNanos} saying how much of the time the peer spent on its own
     * work (its store write), which is not the link's (see {@link Transfer#measured}).
     */
    private <T> CompletableFuture<T> timed(Member peer, Transfer.Direction direction, long bytes,
            Supplier<CompletableFuture<T>> request, ToLongFunction<T> peerNanos) {
        DeliveryRate link = links.computeIfAbsent(direction + peer.id(), id -> new DeliveryRate());
        DeliveryRate.Start start = link.start(nanoClock.getAsLong());
        // The returned stage completes after the sample is recorded: a caller that saw its request
        // complete also sees the link's sample (dependents of one stage run in no fixed order).
        return request.get().whenComplete((result, error) -> {
            if (error != null) {
                link.fail();
                return;
            }
            DeliveryRate.Sample sample = link.complete(start, bytes < 0 ? sizeOf(result) : bytes, nanoClock.getAsLong());
            transfers.accept(Transfer.measured(peer.id(), direction, sample, peerNanos.applyAsLong(result)));
        });
    }

    private static long sizeOf(Object result) {
        return result instanceof byte[] bytes ? bytes.length : 0;
    }

    CompletableFuture<Void> put(Member target, String key, byte[] data) {
        return put(target, key, ByteBuffer.wrap(data), Crc32c.of(data));
    }

    /** Stores the bytes between {@code data}'s position and limit, which stay. */
    CompletableFuture<Void> put(Member target, String key, ByteBuffer data, int crc32c) {
        if (target.sameNode(self)) {
            return local(() -> {
                store.put(key, data, crc32c);
                return null;
            });
        }
        return timed(target, Transfer.Direction.SENT, data.remaining(),
                () -> transport.request(target.address(), Payloads.putBlock(key, data, crc32c), requestTimeout),
                answer -> Payloads.storeNanos(answer.payload()))
                .thenApply(f -> null);
    }

    CompletableFuture<BlockStore.Swap> compareAndPut(Member target, String key, @Nullable byte[] expected,
            @Nullable byte[] replacement) {
        if (target.sameNode(self)) {
            return local(() -> store.compareAndPut(key, expected, replacement));
        }
        return transport.request(target.address(), MessageType.COMPARE_AND_PUT,
                        Payloads.compareAndPut(key, expected, replacement))
                .thenApply(f -> new BlockStore.Swap(Payloads.swapped(f.payload()), Payloads.swapFound(f.payload())));
    }

    CompletableFuture<byte[]> get(Member target, String key) {
        if (target.sameNode(self)) {
            return local(() -> store.get(key));
        }
        return timed(target, Transfer.Direction.RECEIVED, -1,
                () -> transport.request(target.address(), MessageType.GET_BLOCK, Payloads.utf8(key)).thenApply(Frame::payload));
    }

    CompletableFuture<ByteBuffer> readOwnBlock(String key, int length, int crc32c, ByteBuffer target) {
        return local(() -> store.readInto(key, length, crc32c, target));
    }

    CompletableFuture<byte[]> getVerified(Member target, String key, int length, int crc32c) {
        if (target.sameNode(self)) {
            return local(() -> store.get(key, length, crc32c));
        }
        return timed(target, Transfer.Direction.RECEIVED, length,
                () -> transport.request(target.address(), MessageType.GET_BLOCK, Payloads.utf8(key)).thenApply(answer -> {
                    String problem = check(answer, length, crc32c);
                    if (problem != null) {
                        throw new CompletionException(new IOException("block " + key + " from " + target.id()
                                + " is not the expected content: " + problem));
                    }
                    return answer.blockBytes();
                }));
    }

    CompletableFuture<Void> delete(Member target, String key) {
        if (target.sameNode(self)) {
            return local(() -> {
                store.delete(key);
                return null;
            });
        }
        return transport.request(target.address(), MessageType.DELETE_BLOCK, Payloads.utf8(key)).thenApply(f -> null);
    }

    CompletableFuture<List<String>> list(Member target, String prefix) {
        if (target.sameNode(self)) {
            return local(() -> store.keys(prefix));
        }
        return transport.request(target.address(), MessageType.LIST_KEYS, Payloads.utf8(prefix))
                .thenApply(f -> Payloads.stringList(f.payload()));
    }

    BlockBuffers blockBuffers() {
        return blockBuffers;
    }

    /** See {@link RingNode#relay}. */
    CompletableFuture<ByteBuffer> relay(RelayRequest request) {
        RelayException refused = NodeRequestHandler.refusedRoute(request, membership);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        List<String> route = request.route();
        if (!route.isEmpty() && route.get(0).equals(self.id())) {
            return relay(request.next()); // a route through this node itself costs nothing
        }
        if (route.isEmpty()) {
            // The store verifies the block and compares its checksum with the request's: no second pass here.
            return local(() -> readOwn(request)).exceptionally(error -> {
                throw new CompletionException(RelayException.from(unwrap(error), request.key(), self.id(), self.id()));
            });
        }
        Member hop = Member.fromId(route.get(0));
        String source = hop.id();
        Duration deadline = requestTimeout.multipliedBy(route.size());
        Supplier<CompletableFuture<Frame>> fetch = () -> transport.requestBlock(hop.address(),
                new Frame(MessageType.RELAY_BLOCK, 0, request.next().encode()), deadline);
        // Only a hop that serves from its own store times its link; a longer route times the chain behind it.
        return (route.size() == 1 ? timed(hop, Transfer.Direction.RECEIVED, request.length(), fetch) : fetch.get())
                .handle((answer, error) -> {
                    if (error != null) {
                        throw new CompletionException(RelayException.from(unwrap(error), request.key(), source, self.id()));
                    }
                    String problem = check(answer, request.length(), request.crc32c());
                    if (problem != null) {
                        blockBuffers.release(answer.block());
                        throw new CompletionException(new RelayException(ErrorCode.CORRUPT, "block " + request.key()
                                + " from " + source + " failed verification at " + self.id() + ": " + problem));
                    }
                    return answer.block();
                });
    }

    /** Reads the block a relay ends at from this node's store into a lent buffer, given back if the read fails. */
    private ByteBuffer readOwn(RelayRequest request) throws IOException {
        ByteBuffer buffer = blockBuffers.acquire(request.length());
        try {
            return store.readInto(request.key(), request.length(), request.crc32c(), buffer);
        } catch (IOException | RuntimeException e) {
            blockBuffers.release(buffer);
            throw e;
        }
    }

    /** The cause of a {@link CompletionException}, or the error itself. */
    static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    CompletableFuture<Boolean> answers(Member peer, Duration deadline) {
        if (peer.sameNode(self) || peer.id().equals(self.id())) {
            return CompletableFuture.completedFuture(running.getAsBoolean());
        }
        return ping(peer.address(), deadline).handle((members, error) -> error == null);
    }

    /** Asks a peer for the links it measured ({@link MessageType#LINKS}). */
    CompletableFuture<List<MeasuredLink>> measuredLinks(Member peer, Duration deadline) {
        return transport.request(peer.address(), MessageType.LINKS, new byte[0], deadline)
                .thenApply(f -> MeasuredLink.decode(f.payload()));
    }

    /** Probes a peer; the answer is its live member list, itself first. A client sends no record: it is never a member. */
    CompletableFuture<List<Member>> ping(InetSocketAddress peer, Duration deadline) {
        byte[] sender = clientRole ? new byte[0] : MemberCodec.encode(self);
        return transport.request(peer, MessageType.PING, sender, deadline)
                .thenApply(f -> MemberCodec.decodeList(f.payload()));
    }

    private <T> CompletableFuture<T> local(LocalOperation<T> operation) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            io.execute(() -> {
                try {
                    result.complete(operation.run());
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
        } catch (RuntimeException e) {
            result.completeExceptionally(new IOException("sr3 ring node " + self + " is stopped", e));
        }
        return result;
    }

    @FunctionalInterface
    private interface LocalOperation<T> {
        T run() throws Exception;
    }

    /**
     * What is wrong with a received block that should have {@code length} bytes and checksum
     * {@code crc32c}, or null; the frame decoder computed the checksum of its block as it arrived.
     */
    @Nullable
    private static String check(Frame answer, int length, int crc32c) {
        if (answer.block().remaining() != length) {
            return "length " + answer.block().remaining() + " != expected " + length;
        }
        if (answer.blockCrc() != crc32c) {
            return String.format("CRC32C 0x%08x != expected 0x%08x", answer.blockCrc(), crc32c);
        }
        return null;
    }
}
