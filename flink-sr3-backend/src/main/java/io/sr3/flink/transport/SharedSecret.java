package io.sr3.flink.transport;

import javax.annotation.Nullable;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

/**
 * The shared-secret challenge/response of a connection.
 *
 * <p>The server sends a fresh random nonce; the client proves it knows the secret with
 * {@code HMAC-SHA256(secret, nonce)}; the server proves it back with {@code HMAC-SHA256(secret,
 * nonce | "server")}. The secret itself never crosses the wire. Without a configured secret both
 * sides send empty proofs and accept any, which is the unauthenticated mode.
 */
final class SharedSecret {

    static final int NONCE_SIZE = 32;
    private static final byte[] SERVER_SUFFIX = "server".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    @Nullable private final byte[] secret;

    SharedSecret(@Nullable String secret) {
        this.secret = secret == null || secret.isEmpty() ? null : secret.getBytes(StandardCharsets.UTF_8);
    }

    boolean isConfigured() {
        return secret != null;
    }

    static byte[] newNonce() {
        byte[] nonce = new byte[NONCE_SIZE];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    byte[] clientProof(byte[] nonce) {
        return secret == null ? new byte[0] : hmac(nonce, new byte[0]);
    }

    byte[] serverProof(byte[] nonce) {
        return secret == null ? new byte[0] : hmac(nonce, SERVER_SUFFIX);
    }

    boolean acceptsClientProof(byte[] nonce, byte[] proof) {
        return secret == null || MessageDigest.isEqual(hmac(nonce, new byte[0]), proof);
    }

    boolean acceptsServerProof(byte[] nonce, byte[] proof) {
        return secret == null || MessageDigest.isEqual(hmac(nonce, SERVER_SUFFIX), proof);
    }

    private byte[] hmac(byte[] nonce, byte[] suffix) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(nonce);
            mac.update(suffix);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }
}
