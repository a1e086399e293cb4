package io.sr3.flink.fs;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.node.RingStorage;
import io.sr3.flink.ring.Member;
import io.sr3.flink.store.BlockStore;
import io.sr3.flink.transport.Payloads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;
import javax.annotation.concurrent.Immutable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What the live holders of a file's blocks answered when asked which of them they hold intact:
 * replica repair's presence check. One {@code CHECK_BLOCKS} request per holder, all in flight at
 * once, each judged from block headers only (see {@link BlockStore#presence}).
 */
@Immutable
final class HolderCheck {

    private static final Logger LOG = LoggerFactory.getLogger(HolderCheck.class);

    /** No answers: every holder counts as it is recorded. */
    static final HolderCheck NONE = new HolderCheck(Map.of());

    /** Node id -> block key -> what that node answered. */
    private final Map<String, Map<String, BlockStore.Presence>> answers;

    private HolderCheck(Map<String, Map<String, BlockStore.Presence>> answers) {
        this.answers = answers;
    }

    /**
     * Asks every live holder of {@code manifest}'s blocks about the blocks it is recorded for. A
     * holder that does not answer (down, or of a build without {@code CHECK_BLOCKS}) is left out.
     */
    static HolderCheck ask(RingNode node, Manifest manifest) {
        Map<String, Member> holders = new LinkedHashMap<>();
        Map<String, List<Payloads.ExpectedBlock>> asked = new LinkedHashMap<>();
        for (Manifest.BlockRef block : manifest.blocks()) {
            for (Member holder : block.holders()) {
                if (node.membership().isLive(holder)) {
                    holders.putIfAbsent(holder.nodeId(), holder);
                    asked.computeIfAbsent(holder.nodeId(), id -> new ArrayList<>())
                            .add(new Payloads.ExpectedBlock(block.key(), block.length(), block.crc32c()));
                }
            }
        }
        Map<String, CompletableFuture<List<BlockStore.Presence>>> pending = new LinkedHashMap<>();
        asked.forEach((id, blocks) -> pending.put(id, node.storage().checkBlocks(holders.get(id), blocks)));
        Map<String, Map<String, BlockStore.Presence>> answers = new HashMap<>();
        for (Map.Entry<String, CompletableFuture<List<BlockStore.Presence>>> answer : pending.entrySet()) {
            List<Payloads.ExpectedBlock> blocks = asked.get(answer.getKey());
            try {
                List<BlockStore.Presence> states = RingStorage.await(answer.getValue());
                Map<String, BlockStore.Presence> byKey = new HashMap<>();
                for (int i = 0; i < blocks.size(); i++) {
                    byKey.put(blocks.get(i).key(), states.get(i));
                }
                answers.put(answer.getKey(), byKey);
            } catch (IOException e) {
                LOG.debug("[{}] {} did not answer the presence check of {}: {}", node.self().id(),
                        holders.get(answer.getKey()).id(), manifest.path(), e.getMessage());
            }
        }
        return new HolderCheck(answers);
    }

    /** What {@code holder} answered about {@code blockKey}; null if it was not asked or did not answer. */
    @Nullable
    BlockStore.Presence of(Member holder, String blockKey) {
        Map<String, BlockStore.Presence> byKey = answers.get(holder.nodeId());
        return byKey == null ? null : byKey.get(blockKey);
    }
}
