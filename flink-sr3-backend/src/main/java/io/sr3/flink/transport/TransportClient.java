package io.sr3.flink.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;
import javax.net.ssl.SSLException;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends requests to ring peers over two pooled connections per peer: one for requests that send or
 * fetch a block ({@link MessageType#carriesBlock}), one for everything else. A TCP connection
 * delivers in order, so on one connection a failure-detector ping sent behind a few 4 MiB blocks on
 * a 2 MB/s link waits seconds and the peer is declared dead although it answers; on its own
 * connection it waits for nothing but the link's round trip.
 *
 * <p>Requests are correlated by id: a {@code requestId -> future} map per connection. Every
 * request carries a deadline, counted from the moment it is issued (connecting included); a
 * request that misses it fails with {@link RequestTimeoutException}. When a connection closes,
 * every request still pending on it fails with {@link PeerUnavailableException}, and the next
 * request opens a new connection.
 *
 * <p>Futures complete on a Netty event loop: callers must not block in their callbacks.
 */
@ThreadSafe
public final class TransportClient implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TransportClient.class);

    private final EventLoopGroup group;
    private final SharedSecret secret;
    @Nullable private final SslContext tls;
    private final int maxFrameSize;
    @Nullable private final BlockBuffers blockBuffers;
    /** Requests whose answer's block the decoder receives into a lent buffer. */
    private final Set<Long> lendingRequests = ConcurrentHashMap.newKeySet();
    private final Duration requestTimeout;
    private final AtomicLong nextRequestId = new AtomicLong(1);
    private final Map<Lane, CompletableFuture<Connection>> connections = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile LinkShaper shaper;

    /**
     * @throws IOException if the TLS keystore or truststore cannot be loaded
     */
    public TransportClient(EventLoopGroup group, TransportSecurity security, int maxFrameSize, Duration requestTimeout)
            throws IOException {
        this(group, security, maxFrameSize, requestTimeout, null);
    }

    /**
     * @param blockBuffers where the blocks of answers to {@link #requestBlock} are received
     *     into, or null for heap arrays
     * @throws IOException if the TLS keystore or truststore cannot be loaded
     */
    public TransportClient(EventLoopGroup group, TransportSecurity security, int maxFrameSize, Duration requestTimeout,
            @Nullable BlockBuffers blockBuffers) throws IOException {
        this.blockBuffers = blockBuffers;
        this.group = group;
        this.secret = new SharedSecret(security.secret());
        this.tls = security.tls() == null ? null : security.tls().clientContext();
        this.maxFrameSize = maxFrameSize;
        this.requestTimeout = requestTimeout;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    /**
     * Sends one request and returns its answer. An {@link MessageType#ERROR} answer completes the
     * future exceptionally with a {@link RemoteException}.
     */
    public CompletableFuture<Frame> request(InetSocketAddress peer, MessageType type, byte[] payload) {
        return request(peer, new Frame(type, 0, payload), requestTimeout);
    }

    /** Like {@link #request(InetSocketAddress, MessageType, byte[])} with an explicit deadline. */
    public CompletableFuture<Frame> request(InetSocketAddress peer, MessageType type, byte[] payload, Duration deadline) {
        return request(peer, new Frame(type, 0, payload), deadline);
    }

    /**
     * Sends {@code request} under a fresh request id (the one it carries is ignored): the form for
     * requests that carry a block, which {@link Frame} keeps apart from the rest of the payload.
     */
    public CompletableFuture<Frame> request(InetSocketAddress peer, Frame request, Duration deadline) {
        return request(peer, request, deadline, false);
    }

    /**
     * Like {@link #request(InetSocketAddress, Frame, Duration)} for a request answered with a
     * block ({@link MessageType#RELAY_BLOCK}): the answer's block arrives in a buffer lent by
     * this client's {@link BlockBuffers}, which the caller gives back once it consumed it.
     */
    public CompletableFuture<Frame> requestBlock(InetSocketAddress peer, Frame request, Duration deadline) {
        return request(peer, request, deadline, blockBuffers != null);
    }

    private CompletableFuture<Frame> request(InetSocketAddress peer, Frame request, Duration deadline, boolean lend) {
        MessageType type = request.type();
        CompletableFuture<Frame> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(new PeerUnavailableException(peer.toString(), "client is closed"));
            return result;
        }
        long requestId = nextRequestId.getAndIncrement();
        if (lend) {
            lendingRequests.add(requestId);
            result.whenComplete((frame, error) -> lendingRequests.remove(requestId));
        }
        var timeout = group.schedule(
                () -> result.completeExceptionally(new RequestTimeoutException(peer.toString(), type, deadline)),
                deadline.toNanos(),
                TimeUnit.NANOSECONDS);
        result.whenComplete((frame, error) -> timeout.cancel(false));
        connection(new Lane(peer, type.carriesBlock())).whenComplete((connection, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
            } else {
                connection.send(request.withRequestId(requestId), result);
            }
        });
        return result;
    }

    private CompletableFuture<Connection> connection(Lane lane) {
        CompletableFuture<Connection> existing = connections.get(lane);
        if (existing != null && !(existing.isDone() && (existing.isCompletedExceptionally() || !existing.join().isOpen()))) {
            return existing;
        }
        CompletableFuture<Connection> fresh = new CompletableFuture<>();
        if (existing == null ? connections.putIfAbsent(lane, fresh) != null : !connections.replace(lane, existing, fresh)) {
            return connection(lane);
        }
        connect(lane.peer(), fresh);
        // A failed connection attempt is forgotten so that the next request tries again.
        fresh.whenComplete((c, e) -> {
            if (e != null) {
                connections.remove(lane, fresh);
            }
        });
        return fresh;
    }

    private void connect(InetSocketAddress peer, CompletableFuture<Connection> ready) {
        FrameDecoder decoder = new FrameDecoder(maxFrameSize, blockBuffers,
                (type, requestId) -> type == MessageType.DATA && lendingRequests.contains(requestId));
        FrameEncoder encoder = new FrameEncoder();
        Connection connection = new Connection(peer, ready, decoder, encoder);
        ChannelFuture connect = new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, ChannelBuffers.ALLOCATOR)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, requestTimeout.toMillis()))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (tls != null) {
                            SslHandler ssl = tls.newHandler(ch.alloc(), peer.getHostString(), peer.getPort());
                            ssl.setHandshakeTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
                            ssl.handshakeFuture().addListener(f -> {
                                if (!f.isSuccess() && ready.completeExceptionally(new AuthenticationException(
                                        peer.toString(), "TLS: " + f.cause().getMessage()))) {
                                    LOG.warn("sr3 TLS connection to {} refused: {}", peer, f.cause().getMessage());
                                }
                            });
                            ch.pipeline().addLast("tls", ssl);
                        }
                        ch.pipeline().addLast(decoder).addLast(encoder).addLast(connection);
                    }
                })
                .connect(peer);
        connect.addListener(f -> {
            if (!f.isSuccess()) {
                ready.completeExceptionally(new PeerUnavailableException(peer.toString(), "could not connect", f.cause()));
            }
        });
        // A peer that accepts the connection but never completes the handshake must not hold
        // every later request to it: the attempt fails and the next request connects again.
        var deadline = group.schedule(() -> {
            if (ready.completeExceptionally(new AuthenticationException(peer.toString(),
                    "no handshake within " + requestTimeout.toMillis() + " ms"))) {
                connect.channel().close();
            }
        }, requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
        ready.whenComplete((c, e) -> deadline.cancel(false));
    }

    /** Delays every answer received from now on as {@code shaper} says. For tests and benchmarks only. */
    public void shapeWith(LinkShaper shaper) {
        this.shaper = shaper;
    }

    /** Closes every connection; pending requests fail. The event loop group is the caller's. */
    @Override
    public void close() {
        closed = true;
        for (CompletableFuture<Connection> connection : connections.values()) {
            connection.thenAccept(Connection::close);
        }
        connections.clear();
    }

    /** Closes the connections to one peer, failing their pending requests. For fault tests and shutdown. */
    public void disconnect(InetSocketAddress peer) {
        for (boolean blocks : new boolean[] {false, true}) {
            CompletableFuture<Connection> connection = connections.remove(new Lane(peer, blocks));
            if (connection != null) {
                connection.thenAccept(Connection::close);
            }
        }
    }

    /** One of the two connections to a peer: the one for block transfers, or the one for the rest. */
    private record Lane(InetSocketAddress peer, boolean blocks) {}

    /** One authenticated channel to one peer and the requests waiting for answers on it. */
    private final class Connection extends SimpleChannelInboundHandler<Frame> {

        private final InetSocketAddress peer;
        private final CompletableFuture<Connection> ready;
        private final FrameDecoder decoder;
        private final FrameEncoder encoder;
        private final Map<Long, CompletableFuture<Frame>> pending = new ConcurrentHashMap<>();
        private volatile Channel channel;
        private byte[] serverNonce;
        private byte[] clientNonce;

        Connection(InetSocketAddress peer, CompletableFuture<Connection> ready, FrameDecoder decoder, FrameEncoder encoder) {
            this.peer = peer;
            this.ready = ready;
            this.decoder = decoder;
            this.encoder = encoder;
        }

        boolean isOpen() {
            Channel c = channel;
            return c != null && c.isActive();
        }

        void send(Frame frame, CompletableFuture<Frame> result) {
            pending.put(frame.requestId(), result);
            result.whenComplete((f, e) -> pending.remove(frame.requestId()));
            Channel c = channel;
            if (c == null || !c.isActive()) {
                result.completeExceptionally(new PeerUnavailableException(peer.toString(), "connection closed"));
                return;
            }
            c.writeAndFlush(frame).addListener(f -> {
                if (!f.isSuccess()) {
                    result.completeExceptionally(new PeerUnavailableException(peer.toString(), "could not send " + frame.type(), f.cause()));
                }
            });
        }

        void close() {
            Channel c = channel;
            if (c != null) {
                c.close();
            }
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
            if (!ready.isDone()) {
                handshake(ctx, frame);
                return;
            }
            CompletableFuture<Frame> result = pending.remove(frame.requestId());
            if (result == null) {
                releaseBlock(frame); // the request timed out already
                return;
            }
            LinkShaper currentShaper = shaper;
            long delay = currentShaper == null ? 0 : currentShaper.delayNanos(peer, frame.length(), System.nanoTime());
            if (delay > 0) {
                ctx.executor().schedule(() -> complete(result, frame), delay, TimeUnit.NANOSECONDS);
            } else {
                complete(result, frame);
            }
        }

        private void complete(CompletableFuture<Frame> result, Frame frame) {
            if (frame.type() == MessageType.ERROR) {
                result.completeExceptionally(new RemoteException(
                        peer.toString(), Payloads.errorCode(frame.payload()), Payloads.errorMessage(frame.payload())));
            } else if (!result.complete(frame)) {
                releaseBlock(frame);
            }
        }

        private void releaseBlock(Frame frame) {
            if (blockBuffers != null) {
                blockBuffers.release(frame.block());
            }
        }

        private void handshake(ChannelHandlerContext ctx, Frame frame) {
            switch (frame.type()) {
                case CHALLENGE -> {
                    if (serverNonce != null || frame.payload().length != SharedSecret.NONCE_SIZE) {
                        fail(ctx, new AuthenticationException(peer.toString(), "the peer sent a malformed or second "
                                + "challenge (" + frame.payload().length + " bytes)"));
                        return;
                    }
                    serverNonce = frame.payload();
                    clientNonce = SharedSecret.newNonce();
                    ctx.writeAndFlush(new Frame(MessageType.AUTH, 0, secret.clientAuth(serverNonce, clientNonce)));
                }
                case AUTH_OK -> {
                    if (serverNonce != null && secret.acceptsServerProof(serverNonce, clientNonce, frame.payload())) {
                        decoder.authenticated(secret.serverToClient(serverNonce, clientNonce));
                        encoder.sealWith(secret.clientToServer(serverNonce, clientNonce));
                        ready.complete(this);
                    } else {
                        fail(ctx, new AuthenticationException(peer.toString(), "the peer could not prove it knows the shared secret"));
                    }
                }
                case ERROR -> fail(ctx, new AuthenticationException(peer.toString(), "the peer refused our handshake: " + Payloads.errorMessage(frame.payload())));
                default -> fail(ctx, new CorruptFrameException(peer.toString(), "unexpected " + frame.type() + " during handshake"));
            }
        }

        private void fail(ChannelHandlerContext ctx, Exception cause) {
            LOG.warn("sr3 connection failed: {}", cause.getMessage());
            ready.completeExceptionally(cause);
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            PeerUnavailableException closedError = new PeerUnavailableException(peer.toString(), "connection closed while waiting for an answer");
            ready.completeExceptionally(new PeerUnavailableException(peer.toString(), "connection closed during the handshake"));
            for (CompletableFuture<Frame> result : pending.values()) {
                result.completeExceptionally(closedError);
            }
            pending.clear();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
            if (root instanceof SSLException) {
                LOG.debug("sr3 TLS connection to {} failed: {}", peer, root.getMessage());
            } else if (root instanceof CorruptFrameException) {
                LOG.warn("Closing sr3 connection: {}", root.getMessage());
            } else {
                LOG.debug("sr3 connection to {} failed", peer, root);
            }
            ctx.close();
        }
    }
}
