package io.sr3.flink.ring;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * A ring node as peers see it: where it listens and which failure zone it is in.
 *
 * <p>The id is {@code host:port}, unique among live nodes because no two processes can listen on
 * the same address; a node restarted on the same address is the same member with an empty store,
 * which replica fallback handles.
 *
 * @param host the address peers connect to
 * @param port the ring port
 * @param zone the failure zone ({@code sr3.ring.zone}); empty when not configured
 */
public record Member(String host, int port, String zone) {

    public Member {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(zone, "zone");
        if (host.isBlank()) {
            throw new IllegalArgumentException("Member host must not be blank");
        }
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("Member port must be in 1..65535, was " + port);
        }
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

    public String id() {
        return host + ":" + port;
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(host, port);
    }

    /** The zone replicas should be spread over; without a configured zone each node is its own. */
    public String effectiveZone() {
        return zone.isEmpty() ? "node:" + id() : zone;
    }

    /** Same node, whatever zone a record claims: identity is the address. */
    public boolean sameNode(Member other) {
        return other != null && host.equals(other.host) && port == other.port;
    }

    @Override
    public String toString() {
        return zone.isEmpty() ? id() : id() + "@" + zone;
    }
}
