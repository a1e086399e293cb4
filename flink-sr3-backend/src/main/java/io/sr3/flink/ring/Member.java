package io.sr3.flink.ring;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * A ring node as peers see it: who it is, where it listens and which failure zone it is in.
 *
 * <p>Identity is the {@code nodeId}: a storage node keeps it in its store directory, so a node
 * restarted with its disk, on the same or a new address, is the same member with the same blocks
 * (placement hashes the node id, and manifests name holders by it). The {@link #id()} is the
 * address, {@code host:port}, used to connect and in log lines. A record made from an address
 * alone ({@link #fromId}, the three-argument constructor: seeds, relay hops, clients) takes the
 * address as its node id.
 *
 * @param nodeId the persistent identity of the node
 * @param host the address peers connect to
 * @param port the ring port
 * @param zone the failure zone ({@code sr3.ring.zone}); empty when not configured
 */
public record Member(String nodeId, String host, int port, String zone) {

    public Member {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(zone, "zone");
        if (nodeId.isBlank()) {
            throw new IllegalArgumentException("Member node id must not be blank");
        }
        if (host.isBlank()) {
            throw new IllegalArgumentException("Member host must not be blank");
        }
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("Member port must be in 1..65535, was " + port);
        }
    }

    /** A member known by its address only: its node id is the address. */
    public Member(String host, int port, String zone) {
        this(host + ":" + port, host, port, zone);
    }

    /** Parses the {@code host:port} form of {@link #id()}; the zone is unknown (empty). */
    public static Member fromId(String id) {
        int colon = id.lastIndexOf(':');
        if (colon <= 0 || colon == id.length() - 1) {
            throw new IllegalArgumentException("Not a member id of the form host:port: '" + id + "'");
        }
        try {
            return new Member(id.substring(0, colon), Integer.parseInt(id.substring(colon + 1)), "");
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Not a member id of the form host:port: '" + id + "'", e);
        }
    }

    /** The address, {@code host:port}. */
    public String id() {
        return host + ":" + port;
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(host, port);
    }

    /** The same node at another address (it restarted elsewhere with its store). */
    public Member at(String newHost, int newPort) {
        return new Member(nodeId, newHost, newPort, zone);
    }

    /** The zone replicas should be spread over; without a configured zone each node is its own. */
    public String effectiveZone() {
        return zone.isEmpty() ? "node:" + nodeId : zone;
    }

    /** Whether {@code members} holds a record of this node (by node id, see {@link #sameNode}). */
    public boolean isIn(java.util.Collection<Member> members) {
        for (Member m : members) {
            if (sameNode(m)) {
                return true;
            }
        }
        return false;
    }

    /** Same node, whatever address or zone a record claims: identity is the node id. */
    public boolean sameNode(Member other) {
        return other != null && nodeId.equals(other.nodeId);
    }

    @Override
    public String toString() {
        String text = nodeId.equals(id()) ? id() : id() + "[" + nodeId + "]";
        return zone.isEmpty() ? text : text + "@" + zone;
    }
}
