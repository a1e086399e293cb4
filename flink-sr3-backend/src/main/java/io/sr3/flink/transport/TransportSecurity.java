package io.sr3.flink.transport;

import javax.annotation.Nullable;

/**
 * How ring connections are protected: mutual TLS, a shared secret (a handshake that proves it, then
 * every frame sealed with AES-256-GCM), both, or neither.
 *
 * @param tls certificates for mutual TLS; null for plain TCP
 * @param secret the shared secret; null for none
 * @param unauthenticatedAllowed whether the user asked for an unauthenticated ring explicitly
 *     ({@code sr3.transport.authentication: none}); without it a node reachable from other
 *     machines refuses to start unauthenticated
 */
public record TransportSecurity(@Nullable TlsSettings tls, @Nullable String secret, boolean unauthenticatedAllowed) {

    public TransportSecurity {
        if (secret != null && secret.isEmpty()) {
            secret = null;
        }
    }

    /** No TLS and no secret: any process that reaches the port is trusted. */
    public static TransportSecurity none() {
        return new TransportSecurity(null, null, false);
    }

    public static TransportSecurity ofSecret(@Nullable String secret) {
        return new TransportSecurity(null, secret, false);
    }

    /** Whether peers must prove who they are (a certificate or the secret). */
    public boolean authenticates() {
        return tls != null || secret != null;
    }

    /** Never prints the secret. */
    @Override
    public String toString() {
        if (!authenticates()) {
            return "unauthenticated";
        }
        return (tls != null ? tls.toString() : "no TLS") + (secret != null ? " + shared secret (redacted)" : "");
    }
}
