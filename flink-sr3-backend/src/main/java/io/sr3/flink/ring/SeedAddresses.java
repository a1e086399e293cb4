package io.sr3.flink.ring;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The addresses one {@code sr3.ring.seeds} entry stands for: every address its host resolves to
 * now, so that one DNS name of a Kubernetes headless service (one A record per ready pod) seeds
 * the ring with every pod behind it. Callers resolve again at every probe round; the JVM's DNS
 * cache ({@code networkaddress.cache.ttl}, 30 s by default) decides how fresh the answer is.
 */
public final class SeedAddresses {

    /** Resolves a host name to all its addresses; {@link InetAddress#getAllByName} outside tests. */
    @FunctionalInterface
    public interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    private SeedAddresses() {}

    /**
     * The addresses of {@code seed} ({@code host:port}), keyed by the {@code ip:port} form a node
     * that names itself by its IP has as its member id. A name that does not resolve now maps to
     * one unresolved address keyed by the seed itself, so the prober reports it as silent and tries
     * again next round.
     *
     * @throws IllegalArgumentException if {@code seed} is not {@code host:port}
     */
    public static Map<String, InetSocketAddress> resolve(String seed, Resolver resolver) {
        Member member = Member.fromId(seed);
        String host = member.host();
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1); // an IPv6 literal as written in a URI
        }
        Map<String, InetSocketAddress> addresses = new LinkedHashMap<>();
        try {
            for (InetAddress address : resolver.resolve(host)) {
                addresses.putIfAbsent(address.getHostAddress() + ":" + member.port(),
                        new InetSocketAddress(address, member.port()));
            }
        } catch (UnknownHostException | SecurityException e) {
            addresses.clear();
        }
        if (addresses.isEmpty()) {
            addresses.put(member.id(), InetSocketAddress.createUnresolved(host, member.port()));
        }
        return addresses;
    }
}
