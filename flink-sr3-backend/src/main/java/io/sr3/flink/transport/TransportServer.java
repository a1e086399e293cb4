package io.sr3.flink.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;
import javax.net.ssl.SSLException;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Accepts sr3 connections and serves their requests.
 *
 * <pre>
 *   socket -> [TLS] -> FrameDecoder -> ServerHandler --(I/O executor)--> RequestHandler
 *   socket <- [TLS] <- FrameEncoder <------------------ response frame <-----'
 * </pre>
 *
 * <p>Every connection must complete mutual TLS (if configured) and the sr3 handshake ({@link
 * SharedSecret}) within {@link TransportLimits#handshakeTimeout()}; until it has, frames are
 * limited to {@link FrameDecoder#HANDSHAKE_FRAME_SIZE} and no request is served, and a failure
 * closes the connection with a log line that names the remote address. Connections beyond the
 * limits (in all, per IP address) are closed at once, idle ones after the idle timeout. Requests
 * run on the given I/O executor, never on the event loop; when its queue is full a request is
 * answered {@link ErrorCode#BUSY}. A connection whose answers the peer does not read stops being
 * read until they drain.
 */
@ThreadSafe
public final class TransportServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TransportServer.class);
    /** Answers buffered per connection before it stops reading requests. */
    private static final WriteBufferWaterMark ANSWER_BUFFER = new WriteBufferWaterMark(1 << 20, 8 << 20);

    private final Channel serverChannel;
    private final ChannelGroup connections;
    private final InetSocketAddress boundAddress;
    private final Counters counters;

    private TransportServer(Channel serverChannel, ChannelGroup connections, Counters counters) {
        this.serverChannel = serverChannel;
        this.connections = connections;
        this.boundAddress = (InetSocketAddress) serverChannel.localAddress();
        this.counters = counters;
    }

    /** Refusals and open connections, shared by every connection of one server. */
    private static final class Counters {
        final AtomicLong refusedHandshakes = new AtomicLong();
        final AtomicLong refusedConnections = new AtomicLong();
        final AtomicLong busyAnswers = new AtomicLong();
        final AtomicInteger open = new AtomicInteger();
        final Map<InetAddress, AtomicInteger> openPerAddress = new ConcurrentHashMap<>();
        final Map<InetAddress, Boolean> limitLogged = new ConcurrentHashMap<>();
    }

    /**
     * Binds to the first free port of {@code ports} on {@code host}. With {@code blockBuffers},
     * the blocks of PUT requests are received into buffers it lends: the server gives a request's
     * back once its answer is decided (the handler must not keep it), and an answer's block once it
     * is written; without, blocks are received into heap arrays.
     *
     * @param ports candidate ports in order; 0 means an ephemeral port
     */
    public static TransportServer start(
            EventLoopGroup group,
            String host,
            Iterator<Integer> ports,
            TransportSecurity security,
            TransportLimits limits,
            int maxFrameSize,
            RequestHandler handler,
            ExecutorService ioExecutor,
            @Nullable BlockBuffers blockBuffers)
            throws IOException {
        SharedSecret sharedSecret = new SharedSecret(security.secret());
        SslContext tls = security.tls() == null ? null : security.tls().serverContext();
        Counters counters = new Counters();
        ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
        ServerBootstrap bootstrap =
                new ServerBootstrap()
                        .group(group)
                        .channel(NioServerSocketChannel.class)
                        .childOption(ChannelOption.TCP_NODELAY, true)
                        .childOption(ChannelOption.ALLOCATOR, ChannelBuffers.ALLOCATOR)
                        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, ANSWER_BUFFER)
                        .childHandler(
                                new ChannelInitializer<SocketChannel>() {
                                    @Override
                                    protected void initChannel(SocketChannel ch) {
                                        if (!admit(ch, counters, limits)) {
                                            ch.close();
                                            return;
                                        }
                                        connections.add(ch);
                                        if (tls != null) {
                                            SslHandler ssl = tls.newHandler(ch.alloc());
                                            ssl.setHandshakeTimeout(limits.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS);
                                            ssl.handshakeFuture().addListener(f -> {
                                                if (!f.isSuccess()) {
                                                    counters.refusedHandshakes.incrementAndGet();
                                                    LOG.warn("Refused sr3 TLS connection from {}: {}", ch.remoteAddress(),
                                                            f.cause().getMessage());
                                                }
                                            });
                                            ch.pipeline().addLast("tls", ssl);
                                        }
                                        FrameDecoder decoder = new FrameDecoder(maxFrameSize, blockBuffers,
                                                (type, requestId) -> type == MessageType.PUT_BLOCK);
                                        FrameEncoder encoder = new FrameEncoder();
                                        ch.pipeline()
                                                .addLast(new IdleStateHandler(0, 0, limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS))
                                                .addLast(decoder)
                                                .addLast(encoder)
                                                .addLast(new ServerHandler(sharedSecret, decoder, encoder, handler, ioExecutor,
                                                        blockBuffers, counters, limits));
                                    }
                                });
        BindException lastFailure = null;
        while (ports.hasNext()) {
            int port = ports.next();
            try {
                Channel channel = bootstrap.bind(host, port).sync().channel();
                return new TransportServer(channel, connections, counters);
            } catch (Exception e) {
                if (e instanceof BindException bind) {
                    lastFailure = bind;
                    continue;
                }
                throw new IOException("Could not bind the sr3 ring server to " + host + ":" + port, e);
            }
        }
        throw new IOException(
                "No free port for the sr3 ring server on " + host + " in the range of sr3.ring.port",
                lastFailure);
    }

    /**
     * Counts a new connection in, or refuses it (logged once per address until one of its
     * connections closes). A count is only raised below its limit, the address's first, so a
     * refused connection never shows in {@link #openConnections}, not even for a moment.
     */
    private static boolean admit(SocketChannel ch, Counters counters, TransportLimits limits) {
        InetAddress address = ch.remoteAddress().getAddress();
        AtomicInteger fromAddress = counters.openPerAddress.computeIfAbsent(address, a -> new AtomicInteger());
        boolean admitted = incrementBelow(fromAddress, limits.maxConnectionsPerAddress());
        if (admitted && !incrementBelow(counters.open, limits.maxConnections())) {
            fromAddress.decrementAndGet();
            admitted = false;
        }
        if (!admitted) {
            counters.refusedConnections.incrementAndGet();
            if (counters.limitLogged.putIfAbsent(address, Boolean.TRUE) == null) {
                LOG.warn("Refusing sr3 connections from {}: {} open from it (sr3.transport.max-connections-per-address "
                        + "{}), {} in all (sr3.transport.max-connections {})", ch.remoteAddress(), fromAddress.get(),
                        limits.maxConnectionsPerAddress(), counters.open.get(), limits.maxConnections());
            }
            return false;
        }
        ch.closeFuture().addListener(f -> {
            counters.open.decrementAndGet();
            fromAddress.decrementAndGet();
            counters.limitLogged.remove(address);
        });
        return true;
    }

    /** Adds one to {@code count} if it is below {@code limit}; false (and unchanged) otherwise. */
    private static boolean incrementBelow(AtomicInteger count, int limit) {
        while (true) {
            int current = count.get();
            if (current >= limit) {
                return false;
            }
            if (count.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    public InetSocketAddress address() {
        return boundAddress;
    }

    /** Connections closed because the peer failed TLS or the sr3 handshake, or did not finish it in time. */
    public long refusedHandshakes() {
        return counters.refusedHandshakes.get();
    }

    /** Connections closed at once because they exceeded the connection limits. */
    public long refusedConnections() {
        return counters.refusedConnections.get();
    }

    /** Requests answered {@link ErrorCode#BUSY} because the request queue was full. */
    public long busyAnswers() {
        return counters.busyAnswers.get();
    }

    /** Connections open now. */
    public int openConnections() {
        return counters.open.get();
    }

    /** Stops accepting and closes every accepted connection, so peers notice at once. */
    @Override
    public void close() {
        serverChannel.close().syncUninterruptibly();
        connections.close().awaitUninterruptibly();
    }

    /** One per connection: runs the handshake, then hands requests to the I/O executor. */
    private static final class ServerHandler extends SimpleChannelInboundHandler<Frame> {

        private final SharedSecret secret;
        private final FrameDecoder decoder;
        private final FrameEncoder encoder;
        private final RequestHandler handler;
        private final ExecutorService ioExecutor;
        @Nullable private final BlockBuffers blockBuffers;
        private final Counters counters;
        private final TransportLimits limits;
        private byte[] nonce;
        private boolean authenticated;
        @Nullable private ScheduledFuture<?> handshakeDeadline;

        ServerHandler(SharedSecret secret, FrameDecoder decoder, FrameEncoder encoder, RequestHandler handler,
                ExecutorService ioExecutor, @Nullable BlockBuffers blockBuffers, Counters counters, TransportLimits limits) {
            this.blockBuffers = blockBuffers;
            this.secret = secret;
            this.decoder = decoder;
            this.encoder = encoder;
            this.handler = handler;
            this.ioExecutor = ioExecutor;
            this.counters = counters;
            this.limits = limits;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            nonce = SharedSecret.newNonce();
            handshakeDeadline = ctx.executor().schedule(() -> {
                if (!authenticated && ctx.channel().isActive()) {
                    counters.refusedHandshakes.incrementAndGet();
                    LOG.warn("Closing sr3 connection from {}: no handshake within {} (sr3.transport.handshake-timeout)",
                            ctx.channel().remoteAddress(), limits.handshakeTimeout());
                    ctx.close();
                }
            }, limits.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS);
            ctx.writeAndFlush(new Frame(MessageType.CHALLENGE, 0, nonce));
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
            String remote = String.valueOf(ctx.channel().remoteAddress());
            if (!authenticated) {
                byte[] clientNonce = frame.type() == MessageType.AUTH ? secret.acceptClientAuth(nonce, frame.payload()) : null;
                if (clientNonce != null) {
                    authenticated = true;
                    handshakeDeadline.cancel(false);
                    ctx.writeAndFlush(new Frame(MessageType.AUTH_OK, frame.requestId(), secret.serverProof(nonce, clientNonce)));
                    encoder.sealWith(secret.serverToClient(nonce, clientNonce));
                    decoder.authenticated(secret.clientToServer(nonce, clientNonce));
                } else {
                    counters.refusedHandshakes.incrementAndGet();
                    LOG.warn(
                            "Refused sr3 connection from {}: {} (check sr3.transport.secret on that node)",
                            remote,
                            frame.type() == MessageType.AUTH ? "wrong or missing shared secret" : frame.type() + " before the handshake");
                    ctx.writeAndFlush(error(frame.requestId(), ErrorCode.UNAUTHENTICATED, "shared-secret handshake failed"))
                            .addListener(ChannelFutureListener.CLOSE);
                }
                release(frame);
                return;
            }
            if (frame.type().isResponse() || frame.type() == MessageType.AUTH) {
                ctx.writeAndFlush(error(frame.requestId(), ErrorCode.BAD_REQUEST, frame.type() + " is not a request"));
                release(frame);
                return;
            }
            try {
                ioExecutor.execute(() -> serve(ctx, frame, remote));
            } catch (RejectedExecutionException e) {
                release(frame);
                if (ioExecutor.isShutdown()) {
                    ctx.writeAndFlush(error(frame.requestId(), ErrorCode.INTERNAL, "node is shutting down"));
                } else {
                    counters.busyAnswers.incrementAndGet();
                    ctx.writeAndFlush(error(frame.requestId(), ErrorCode.BUSY, "request queue full; try another replica"));
                }
            }
        }

        private void serve(ChannelHandlerContext ctx, Frame request, String remote) {
            CompletableFuture<Frame> answer;
            try {
                answer = handler.handleAsync(request, remote);
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            answer.whenComplete((frame, error) -> {
                release(request);
                Frame response;
                if (error == null) {
                    response = frame.withRequestId(request.requestId());
                } else {
                    LOG.warn("Failed to serve {} from {}", request, remote, error);
                    response = error(request.requestId(), ErrorCode.INTERNAL, String.valueOf(error));
                }
                ctx.writeAndFlush(response).addListener(written -> release(response));
            });
        }

        /** Gives a frame's block back if it is in a lent buffer. */
        private void release(Frame frame) {
            if (blockBuffers != null) {
                blockBuffers.release(frame.block());
            }
        }

        /** Stops reading requests while the peer does not read the answers, and resumes when it does. */
        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            ctx.channel().config().setAutoRead(ctx.channel().isWritable());
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof IdleStateEvent) {
                LOG.debug("Closing sr3 connection from {}: idle for {} (sr3.transport.idle-timeout)",
                        ctx.channel().remoteAddress(), limits.idleTimeout());
                ctx.close();
                return;
            }
            ctx.fireUserEventTriggered(event);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (handshakeDeadline != null) {
                handshakeDeadline.cancel(false);
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
            if (root instanceof SSLException) {
                LOG.debug("sr3 TLS connection from {} failed: {}", ctx.channel().remoteAddress(), root.getMessage());
            } else if (root instanceof CorruptFrameException) {
                LOG.warn("Closing sr3 connection: {}", root.getMessage());
            } else if (!(root instanceof IOException)) {
                LOG.warn("Closing sr3 connection from {}", ctx.channel().remoteAddress(), root);
            }
            ctx.close();
        }

        private static Frame error(long requestId, ErrorCode code, String message) {
            return new Frame(MessageType.ERROR, requestId, Payloads.error(code, message));
        }
    }
}
