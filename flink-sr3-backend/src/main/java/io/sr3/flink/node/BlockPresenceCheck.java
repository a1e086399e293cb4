package io.sr3.flink.node;

import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.transport.MessageType;
import io.sr3.flink.transport.Payloads;

import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The {@link MessageType#CHECK_BLOCKS} question, asked of a node and answered from a store: which
 * expected blocks a node holds intact, judged from their headers alone (see {@link
 * BlockStore#presence}), so that repair can check holders without reading block data.
 */
@ThreadSafe
final class BlockPresenceCheck {

    private BlockPresenceCheck() {}

    /**
     * Asks {@code target}, in one request per {@value Payloads#MAX_CHECKED_BLOCKS} blocks, or
     * {@code node}'s own store directly, on the calling thread, when {@code target} is {@code
     * node}; see {@link RingStorage#checkBlocks}.
     */
    static CompletableFuture<List<BlockStore.Presence>> ask(RingNode node, Member target,
            List<Payloads.ExpectedBlock> blocks) {
        if (target.sameNode(node.self())) {
            try {
                List<BlockStore.Presence> found = new ArrayList<>(blocks.size());
                for (Payloads.BlockState state : presence(node.store(), blocks)) {
                    found.add(toPresence(state));
                }
                return CompletableFuture.completedFuture(found);
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        List<CompletableFuture<List<Payloads.BlockState>>> parts = new ArrayList<>();
        for (int from = 0; from < blocks.size(); from += Payloads.MAX_CHECKED_BLOCKS) {
            List<Payloads.ExpectedBlock> part = blocks.subList(from, Math.min(blocks.size(), from + Payloads.MAX_CHECKED_BLOCKS));
            parts.add(node.client().request(target.address(), MessageType.CHECK_BLOCKS, Payloads.checkBlocks(part))
                    .thenApply(answer -> {
                        List<Payloads.BlockState> states = Payloads.blockStates(answer.payload());
                        if (states.size() != part.size()) {
                            throw new CompletionException(new IOException(target.id() + " answered CHECK_BLOCKS of "
                                    + part.size() + " blocks with " + states.size() + " states"));
                        }
                        return states;
                    }));
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture[0])).thenApply(ignored -> {
            List<BlockStore.Presence> found = new ArrayList<>(blocks.size());
            for (CompletableFuture<List<Payloads.BlockState>> part : parts) {
                for (Payloads.BlockState state : part.join()) {
                    found.add(toPresence(state));
                }
            }
            return found;
        });
    }

    /** What {@code store} holds of each expected block, from headers alone: the answer to a {@code CHECK_BLOCKS}. */
    static List<Payloads.BlockState> presence(BlockStore store, List<Payloads.ExpectedBlock> blocks) throws IOException {
        List<Payloads.BlockState> states = new ArrayList<>(blocks.size());
        for (Payloads.ExpectedBlock block : blocks) {
            BlockStore.Presence presence = store.presence(block.key(), block.length(), block.crc32c());
            states.add(new Payloads.BlockState(presence.state().ordinal(), presence.detail()));
        }
        return states;
    }

    private static BlockStore.Presence toPresence(Payloads.BlockState state) {
        return new BlockStore.Presence(BlockStore.Presence.State.values()[state.state()], state.detail());
    }
}
