package io.sr3.flink.tools;

import io.sr3.flink.ring.Member;

import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code sr3 ring}: every storage member and its counters ({@code STATS}). */
@NotThreadSafe
final class RingReport {

    private final AdminConnection connection;
    private final PrintStream out;

    RingReport(AdminConnection connection, PrintStream out) {
        this.connection = connection;
        this.out = out;
    }

    /** Prints one line per member and the totals; returns 1 if a member did not answer. */
    int print() {
        List<Member> members = connection.node().membership().members();
        Map<Member, Map<String, Long>> answers = new LinkedHashMap<>();
        Map<Member, String> failures = new LinkedHashMap<>();
        for (Member member : members) {
            try {
                answers.put(member, connection.stats().stats(member.id()));
            } catch (IOException | RuntimeException e) {
                failures.put(member, String.valueOf(e.getMessage()));
            }
        }
        out.printf("Ring seen through %s: %d storage member(s), replication factor %d (%s)%n",
                connection.nodeConfig().seeds(), members.size(), connection.nodeConfig().replicationFactor(),
                "sr3.ring.replication-factor of this configuration");
        String format = "%-22s %-24s %-10s %14s %16s %14s %9s%n";
        out.printf(format, "ADDRESS", "NODE ID", "ZONE", "BYTES STORED", "UNDER-REPLICATED", "REPAIR PENDING", "SEES");
        long bytes = 0;
        long underReplicated = 0;
        int pending = 0;
        for (Member member : members) {
            Map<String, Long> stats = answers.get(member);
            String zone = member.zone().isEmpty() ? "-" : member.zone();
            if (stats == null) {
                out.printf("%-22s %-24s %-10s unreachable: %s%n", member.id(), member.nodeId(), zone, failures.get(member));
                continue;
            }
            long stored = stats.getOrDefault("bytesStored", 0L);
            long under = stats.getOrDefault("underReplicatedBlocks", 0L);
            boolean repair = stats.getOrDefault("repairPending", 0L) != 0;
            bytes += stored;
            underReplicated += under;
            pending += repair ? 1 : 0;
            out.printf(format, member.id(), member.nodeId(), zone, stored, under, repair ? "yes" : "no",
                    stats.getOrDefault("ringSize", 0L));
        }
        out.printf("Total: %d bytes stored, %d under-replicated block(s) (as each member's last repair scan counted "
                + "them), repair pending on %d member(s), %d unreachable%n", bytes, underReplicated, pending,
                failures.size());
        return failures.isEmpty() ? Sr3Admin.OK : Sr3Admin.FAILED;
    }
}
