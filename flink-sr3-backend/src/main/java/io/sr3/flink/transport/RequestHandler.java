package io.sr3.flink.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Serves the requests of authenticated connections.
 *
 * <p>Called on the server's I/O executor, never on a Netty event loop, so implementations may
 * block on disk.
 */
@FunctionalInterface
public interface RequestHandler {

    /**
     * Answers one request.
     *
     * @param request a request frame (never a response type)
     * @param remote the caller's address, for logs
     * @return the response; its request id is replaced by the request's
     */
    Frame handle(Frame request, String remote) throws Exception;

    /**
     * Answers one request that may wait on other peers (a relay) without holding an I/O thread.
     * The default answers synchronously through {@link #handle}.
     */
    default CompletableFuture<Frame> handleAsync(Frame request, String remote) {
        try {
            return CompletableFuture.completedFuture(handle(request, remote));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
