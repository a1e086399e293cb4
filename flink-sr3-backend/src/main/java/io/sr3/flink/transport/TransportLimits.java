package io.sr3.flink.transport;

import java.time.Duration;

/**
 * What one node's ring server spends on its peers at most, so that no peer (authenticated or
 * not) can exhaust its memory or connections.
 *
 * @param handshakeTimeout how long a connection may take to complete TLS and the sr3 handshake
 * @param idleTimeout how long a connection may stay silent before it is closed
 * @param maxConnections connections open at once, over all peers
 * @param maxConnectionsPerAddress connections open at once from one IP address
 */
public record TransportLimits(Duration handshakeTimeout, Duration idleTimeout, int maxConnections,
        int maxConnectionsPerAddress) {

    public TransportLimits {
        if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
            throw new IllegalArgumentException("handshakeTimeout must be positive, was " + handshakeTimeout);
        }
        if (idleTimeout.isNegative() || idleTimeout.isZero()) {
            throw new IllegalArgumentException("idleTimeout must be positive, was " + idleTimeout);
        }
        if (maxConnections < 1 || maxConnectionsPerAddress < 1) {
            throw new IllegalArgumentException("Connection limits must be at least 1, were " + maxConnections + " and "
                    + maxConnectionsPerAddress);
        }
    }

    /** The defaults of the {@code sr3.transport.*} options. */
    public static TransportLimits defaults() {
        return new TransportLimits(Duration.ofSeconds(10), Duration.ofMinutes(10), 1024, 128);
    }
}
