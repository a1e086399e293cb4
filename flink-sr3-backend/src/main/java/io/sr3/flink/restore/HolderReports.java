package io.sr3.flink.restore;

import io.sr3.flink.node.RingNode;
import io.sr3.flink.ring.Member;
import io.sr3.flink.transport.MeasuredLink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Asks the holders of a restore, in parallel and within a deadline, for the links they measured
 * from their own transfers ({@code LINKS}), and records in this node's {@link NetworkView} the
 * paths between two of them and the links towards this node. In production that is where a
 * restore learns the paths between holders, which only the holders see (every checkpoint block a
 * node writes to its replicas is a sample), and why {@code auto} can pick a line or a tree in a
 * cluster nobody probed. A holder that does not answer in time, or runs a build without {@code
 * LINKS}, adds nothing: its links stay estimated as before.
 */
final class HolderReports {

    private static final Logger LOG = LoggerFactory.getLogger(HolderReports.class);

    /** Next to a restore of seconds, one parallel round trip on a loaded LAN; a silent holder costs no more. */
    static final Duration DEADLINE = Duration.ofMillis(300);

    private HolderReports() {}

    /**
     * Before a restore plans: asks the holders of {@code blocks}. A forced structure needs the
     * estimates as much as {@code auto}: they decide which holder ends a line, which holders are the
     * tree's children, and who sends which block.
     */
    static void beforePlanning(RingNode node, NetworkView view, List<BlockFetch> blocks) {
        askHoldersOf(node, view, blocks, DEADLINE);
    }

    /**
     * Asks every live holder of {@code blocks} but this node, waits at most about {@code deadline}
     * and records what the answers hold.
     *
     * @return how many measured links were heard
     */
    static int askHoldersOf(RingNode node, NetworkView view, List<BlockFetch> blocks, Duration deadline) {
        Map<String, Member> holders = new LinkedHashMap<>();
        for (BlockFetch block : blocks) {
            for (Member holder : block.holders()) {
                if (!holder.sameNode(node.self()) && node.membership().isLive(holder)) {
                    holders.putIfAbsent(holder.id(), holder);
                }
            }
        }
        return ask(node, view, holders.values(), deadline);
    }

    static int ask(RingNode node, NetworkView view, Collection<Member> holders, Duration deadline) {
        if (holders.size() < 2) {
            return 0; // with one holder there is no path between holders to learn, and nothing to choose
        }
        String self = node.self().id();
        List<CompletableFuture<Integer>> answers = new ArrayList<>(holders.size());
        for (Member holder : holders) {
            answers.add(node.measuredLinks(holder, deadline).handle((links, error) -> {
                if (error != null) {
                    Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                    if (cause instanceof IllegalArgumentException) {
                        LOG.warn("[{}] {} answered LINKS with a broken list, ignored: {}", self, holder.id(), cause.getMessage());
                    } else {
                        LOG.debug("[{}] {} reported no links: {}", self, holder.id(), cause.toString());
                    }
                    return 0;
                }
                for (MeasuredLink link : links) {
                    view.hear(link, holder.id(), self);
                }
                return links.size();
            }));
        }
        int heard = 0;
        for (CompletableFuture<Integer> answer : answers) {
            heard += answer.join(); // every request fails by its deadline, and handle() turned failures into 0
        }
        return heard;
    }
}
