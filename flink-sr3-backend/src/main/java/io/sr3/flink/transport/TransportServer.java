package io.sr3.flink.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.GlobalEventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Accepts sr3 connections and serves their requests.
 *
 * <pre>
 *   socket -> FrameDecoder -> ServerHandler --(I/O executor)--> RequestHandler
 *   socket <- FrameEncoder <------------------ response frame <-----'
 * </pre>
 *
 * <p>Every connection starts with the shared-secret handshake ({@link SharedSecret}); until it
 * succeeds no request is served, and a wrong proof closes the connection with a log line that
 * names the remote address. Requests run on the given I/O executor, never on the event loop.
 */
@ThreadSafe
public final class TransportServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TransportServer.class);

    private final Channel serverChannel;
    private final ChannelGroup connections;
    private final InetSocketAddress boundAddress;
    private final AtomicLong refusedHandshakes;

    private TransportServer(Channel serverChannel, ChannelGroup connections, AtomicLong refusedHandshakes) {
        this.serverChannel = serverChannel;
        this.connections = connections;
        this.boundAddress = (InetSocketAddress) serverChannel.localAddress();
        this.refusedHandshakes = refusedHandshakes;
    }

    /**
     * Binds to the first free port of {@code ports} on {@code host}.
     *
     * @param ports candidate ports in order; 0 means an ephemeral port
     */
    public static TransportServer start(
            EventLoopGroup group,
            String host,
            Iterator<Integer> ports,
            String secret,
            int maxFrameSize,
            RequestHandler handler,
            Executor ioExecutor)
            throws IOException {
        SharedSecret sharedSecret = new SharedSecret(secret);
        AtomicLong refused = new AtomicLong();
        ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
        ServerBootstrap bootstrap =
                new ServerBootstrap()
                        .group(group)
                        .channel(NioServerSocketChannel.class)
                        .childOption(ChannelOption.TCP_NODELAY, true)
                        .childHandler(
                                new ChannelInitializer<SocketChannel>() {
                                    @Override
                                    protected void initChannel(SocketChannel ch) {
                                        connections.add(ch);
                                        ch.pipeline()
                                                .addLast(new FrameDecoder(maxFrameSize))
                                                .addLast(FrameEncoder.INSTANCE)
                                                .addLast(new ServerHandler(sharedSecret, handler, ioExecutor, refused));
                                    }
                                });
        BindException lastFailure = null;
        while (ports.hasNext()) {
            int port = ports.next();
            try {
                Channel channel = bootstrap.bind(host, port).sync().channel();
                return new TransportServer(channel, connections, refused);
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

    public InetSocketAddress address() {
        return boundAddress;
    }

    /** Connections closed because the peer failed the shared-secret handshake. */
    public long refusedHandshakes() {
        return refusedHandshakes.get();
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
        private final RequestHandler handler;
        private final Executor ioExecutor;
        private final AtomicLong refused;
        private byte[] nonce;
        private boolean authenticated;

        ServerHandler(SharedSecret secret, RequestHandler handler, Executor ioExecutor, AtomicLong refused) {
            this.secret = secret;
            this.handler = handler;
            this.ioExecutor = ioExecutor;
            this.refused = refused;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            nonce = SharedSecret.newNonce();
            ctx.writeAndFlush(new Frame(MessageType.CHALLENGE, 0, nonce));
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
            String remote = String.valueOf(ctx.channel().remoteAddress());
            if (!authenticated) {
                if (frame.type() == MessageType.AUTH && secret.acceptsClientProof(nonce, frame.payload())) {
                    authenticated = true;
                    ctx.writeAndFlush(new Frame(MessageType.AUTH_OK, frame.requestId(), secret.serverProof(nonce)));
                } else {
                    refused.incrementAndGet();
                    LOG.warn(
                            "Refused sr3 connection from {}: {} (check sr3.transport.secret on that node)",
                            remote,
                            frame.type() == MessageType.AUTH ? "wrong or missing shared secret" : "request before handshake");
                    ctx.writeAndFlush(error(frame.requestId(), ErrorCode.UNAUTHENTICATED, "shared-secret handshake failed"))
                            .addListener(ChannelFutureListener.CLOSE);
                }
                return;
            }
            if (frame.type().isResponse() || frame.type() == MessageType.AUTH) {
                ctx.writeAndFlush(error(frame.requestId(), ErrorCode.BAD_REQUEST, frame.type() + " is not a request"));
                return;
            }
            try {
                ioExecutor.execute(() -> serve(ctx, frame, remote));
            } catch (RejectedExecutionException e) {
                ctx.writeAndFlush(error(frame.requestId(), ErrorCode.INTERNAL, "node is shutting down"));
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
                Frame response;
                if (error == null) {
                    response = new Frame(frame.type(), request.requestId(), frame.payload());
                } else {
                    LOG.warn("Failed to serve {} from {}", request, remote, error);
                    response = error(request.requestId(), ErrorCode.INTERNAL, String.valueOf(error));
                }
                ctx.writeAndFlush(response);
            });
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
            if (root instanceof CorruptFrameException) {
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
