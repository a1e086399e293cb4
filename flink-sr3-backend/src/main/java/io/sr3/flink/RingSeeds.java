package io.sr3.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Parses {@code sr3.ring.seeds} the ways users write host lists: Flink's list syntax
 * ({@code a:6130;b:6130}, or a YAML list), commas as in Kafka's {@code bootstrap.servers} and
 * ZooKeeper quorums, spaces around entries; every entry must be {@code host:port}.
 */
final class RingSeeds {

    /** A DNS name or IPv4 address (RFC 1123 characters), or an IPv6 literal in brackets. */
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?|\\[[0-9A-Fa-f:.]+]");

    /** The longest DNS name (RFC 1035). */
    static final int MAX_HOST_LENGTH = 253;

    private RingSeeds() {}

    /**
     * The seeds of the option's list entries, each split further at commas and trimmed, in order
     * and without duplicates.
     *
     * @throws IllegalArgumentException naming the first entry that is not {@code host:port} and why
     */
    static List<String> parse(List<String> entries) {
        List<String> seeds = new ArrayList<>();
        for (String entry : entries) {
            for (String part : entry.split(",", -1)) {
                String seed = part.strip();
                if (seed.isEmpty()) {
                    continue; // "a:1,,b:1" or a trailing comma: nothing between separators
                }
                String problem = problem(seed);
                if (problem != null) {
                    throw new IllegalArgumentException("each seed must be host:port, got '" + printable(seed) + "' ("
                            + problem + ")");
                }
                if (!seeds.contains(seed)) {
                    seeds.add(seed);
                }
            }
        }
        return seeds;
    }

    /** What is wrong with one seed, or null if it is a valid {@code host:port}. */
    private static String problem(String seed) {
        int colon = seed.lastIndexOf(':');
        if (colon < 0) {
            return "no port";
        }
        String host = seed.substring(0, colon);
        String port = seed.substring(colon + 1);
        if (host.isEmpty()) {
            return "no host";
        }
        if (host.length() > MAX_HOST_LENGTH) {
            return "host longer than " + MAX_HOST_LENGTH + " characters";
        }
        if (!HOST.matcher(host).matches()) {
            return host.matches("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")
                    ? "an IPv6 address must be in brackets, like [::1]:6130"
                    : "the host may hold only letters, digits, '.', '-' and '_'";
        }
        if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return "the port must be a number";
        }
        int number = Integer.parseInt(port);
        if (number < 1 || number > 65535) {
            return "the port must be in 1..65535";
        }
        return null;
    }

    /** The seed with control characters escaped, so a hostile value cannot forge log or error lines. */
    private static String printable(String seed) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < seed.length() && out.length() < 300; i++) {
            char c = seed.charAt(i);
            out.append(Character.isISOControl(c) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return out.toString();
    }
}
