package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import io.sr3.flink.ring.MemberCodec;
import io.sr3.flink.ring.Membership;
import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.store.CorruptBlockException;
import io.sr3.flink.transport.BlockBuffers;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.Frame;
import io.sr3.flink.transport.MeasuredLink;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.Payloads;
import io.sr3.flink.transport.RelayRequest;
import io.sr3.flink.transport.RequestHandler;
import io.sr3.flink.transport.TransportServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** Serves peers' requests against this node's store and membership, on the node's request threads. */
final class NodeRequestHandler implements RequestHandler {

    private static final Logger LOG = LoggerFactory.getLogger(NodeRequestHandler.class);

    private final RingNode node;
    /** Where the record a PING's sender claims goes: hearsay, until that member answers a ping itself. */
    private final FailureDetector detector;

    /** @param detector receives each PING sender's claimed record as hearsay ({@link FailureDetector#heardFrom}) */
    NodeRequestHandler(RingNode node, FailureDetector detector) {
        this.node = node;
        this.detector = detector;
    }

    /** Serves requests on {@code config}'s host and first free port, on the request threads. */
    TransportServer listen(NodeConfig config, NodeThreads threads, BlockBuffers blockBuffers) throws IOException {
        requireAuthenticationAcrossMachines(config);
        return TransportServer.start(threads.network, config.host(), config.ports().iterator(), config.security(),
                config.limits(), config.maxFrameSize(), this, threads.requests, blockBuffers);
    }

    /**
     * Refuses an unauthenticated node that other machines can reach, unless the user asked for one
     * ({@code sr3.transport.authentication: none}).
     */
    private static void requireAuthenticationAcrossMachines(NodeConfig config) throws IOException {
        if (config.security().authenticates() || config.security().unauthenticatedAllowed()) {
            return;
        }
        InetAddress address = InetAddress.getByName(config.host());
        if (!address.isLoopbackAddress()) {
            throw new IOException("The sr3 ring node would listen on " + config.host() + ", reachable from other "
                    + "machines, without authentication: enable TLS (security.ssl.internal.enabled with its keystore "
                    + "and truststore, which the ring follows) or set sr3.transport.secret on every node; to run an "
                    + "unauthenticated ring anyway, set sr3.transport.authentication: none");
        }
    }

    /**
     * Why this node must not follow the route of {@code request} (see {@link
     * RelayRequest#routeProblem}): a {@link ErrorCode#BAD_REQUEST} to answer, or null when every
     * hop is a member of {@code membership}, none repeats, and there are no more hops than members.
     */
    @Nullable
    static RelayException refusedRoute(RelayRequest request, Membership membership) {
        List<Member> members = membership.members();
        Set<String> ids = new HashSet<>();
        for (Member m : members) {
            ids.add(m.id());
        }
        String problem = request.routeProblem(ids, members.size());
        return problem == null ? null : new RelayException(ErrorCode.BAD_REQUEST, problem);
    }

    @Override
    public CompletableFuture<Frame> handleAsync(Frame request, String remote) {
        if (request.type() != MessageType.RELAY_BLOCK) {
            return CompletableFuture.completedFuture(handle(request, remote));
        }
        RelayRequest relay;
        try {
            relay = RelayRequest.decode(request.payload());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.completedFuture(error(ErrorCode.BAD_REQUEST, e.getMessage()));
        }
        return node.relay(relay).handle((data, failure) -> {
            if (failure == null) {
                return Frame.ofBlock(MessageType.DATA, 0, data, relay.crc32c()); // verified against it on the way
            }
            Throwable cause = PeerClient.unwrap(failure);
            if (cause instanceof RelayException e) {
                if (e.code() == ErrorCode.CORRUPT) {
                    LOG.warn("[{}] not forwarding a block to {}: {}", node.self().id(), remote, e.getMessage());
                }
                return error(e.code(), e.getMessage());
            }
            return error(ErrorCode.INTERNAL, String.valueOf(cause));
        });
    }

    @Override
    public Frame handle(Frame request, String remote) {
        try {
            return switch (request.type()) {
                case PUT_BLOCK -> {
                    Payloads.BlockPut put = Payloads.putBlock(request);
                    long start = System.nanoTime();
                    node.store().put(put.key(), put.data(), put.crc32c());
                    yield new Frame(MessageType.OK, 0, Payloads.stored(System.nanoTime() - start));
                }
                case COMPARE_AND_PUT -> {
                    Payloads.CompareAndPut swap = Payloads.compareAndPut(request.payload());
                    BlockStore.Swap done = node.store().compareAndPut(swap.key(), swap.expected(), swap.replacement());
                    yield data(Payloads.swap(done.swapped(), done.found()));
                }
                case GET_BLOCK -> {
                    BlockStore.Block block = node.store().read(Payloads.utf8(request.payload()));
                    yield Frame.ofBlock(MessageType.DATA, 0, block.data(), block.crc32c());
                }
                case DELETE_BLOCK -> {
                    node.store().delete(Payloads.utf8(request.payload()));
                    yield ok();
                }
                case CHECK_BLOCKS -> data(Payloads.blockStates(BlockPresenceCheck.presence(node.store(),
                        Payloads.checkBlocks(request.payload()))));
                case LIST_KEYS -> data(Payloads.stringList(node.store().keys(Payloads.utf8(request.payload()))));
                case STATS -> data(Payloads.longMap(node.stats()));
                case LINKS -> data(MeasuredLink.encode(node.links().report()));
                case PING -> {
                    if (request.payload().length > 0) { // empty: a client node, never a member
                        // A claim, not proof: any connection can send any record. It joins once it answers a ping itself.
                        Member claimed = MemberCodec.decode(request.payload());
                        detector.heardFrom(claimed);
                    }
                    List<Member> live = new ArrayList<>();
                    live.add(node.self());
                    for (Member m : node.membership().members()) {
                        if (!m.sameNode(node.self())) {
                            live.add(m);
                        }
                    }
                    yield data(MemberCodec.encodeList(live));
                }
                default -> error(ErrorCode.BAD_REQUEST, request.type() + " is not a request");
            };
        } catch (BlockNotFoundException e) {
            return error(ErrorCode.NOT_FOUND, e.getMessage());
        } catch (CorruptBlockException e) {
            LOG.warn("[{}] refusing to serve a corrupt block to {}: {}", node.self().id(), remote, e.getMessage());
            if (request.type() == MessageType.GET_BLOCK) {
                quarantine(Payloads.utf8(request.payload()));
            }
            return error(ErrorCode.CORRUPT, e.getMessage());
        } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
            return error(ErrorCode.BAD_REQUEST, String.valueOf(e.getMessage()));
        } catch (io.sr3.flink.store.StoreFullException e) {
            LOG.info("[{}] refused a block from {}: {}", node.self().id(), remote, e.getMessage());
            return error(ErrorCode.STORE_FAILED, e.getMessage());
        } catch (IOException e) {
            LOG.warn("[{}] {} from {} failed", node.self().id(), request.type(), remote, e);
            return error(request.type() == MessageType.PUT_BLOCK || request.type() == MessageType.COMPARE_AND_PUT
                    ? ErrorCode.STORE_FAILED : ErrorCode.INTERNAL, e.getMessage());
        }
    }

    /**
     * Moves a block a read found damaged out of the store at once, as the scrubber would (see
     * {@link BlockScrubber}), so the next presence check re-creates it instead of waiting for the
     * scrub pass to get there.
     */
    private void quarantine(String key) {
        try {
            String why = node.store().quarantineIfCorrupt(key);
            if (why != null) {
                node.metrics().corruptBlocksFound.incrementAndGet();
                LOG.warn("[{}] block {} in file {} is corrupt ({}); moved to {}. It is never served again; replica "
                        + "repair re-creates it from an intact replica", node.self().id(), key,
                        node.store().directory().resolve(key), why, node.store().quarantined(key));
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("[{}] could not move the corrupt block {} aside: {}", node.self().id(), key, e.toString());
        }
    }

    private static Frame ok() {
        return new Frame(MessageType.OK, 0, new byte[0]);
    }

    private static Frame data(byte[] payload) {
        return new Frame(MessageType.DATA, 0, payload);
    }

    private static Frame error(ErrorCode code, String message) {
        return new Frame(MessageType.ERROR, 0, Payloads.error(code, message));
    }
}
