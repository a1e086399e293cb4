package io.sr3.flink.transport;

import javax.annotation.Nullable;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The shared-secret handshake of a connection and the keys it derives (protocol version 3).
 *
 * <pre>
 *   server -> client  CHALLENGE  Ns[32]
 *   client -> server  AUTH       Nc[32] | HMAC(K, "sr3 client proof" | Ns | Nc)[32]
 *   server -> client  AUTH_OK    HMAC(K, "sr3 server proof" | Ns | Nc)[32]
 *   then every frame  header | AES-256-GCM(Kd, seq; header; payload | crc32c) | tag[16]   (see FrameSeal)
 *   with Kd = HMAC(K, "sr3 seal client to server" | Ns | Nc) or HMAC(K, "sr3 seal server to client" | Ns | Nc)
 * </pre>
 *
 * <p>Both sides contribute a fresh nonce and each proof binds both nonces and its direction, so a
 * captured handshake does not replay (the other side's nonce is new), and neither side signs
 * anything the other chose alone: a fake server that sends a real server's challenge learns a
 * client proof, which no server accepts as its own. The session keys authenticate every later
 * frame, so a connection cannot be hijacked after the handshake. The secret never crosses the
 * wire. Without a configured secret the proofs are zeros, any proof is accepted and frames are
 * not sealed: the unauthenticated mode (or TLS alone).
 */
final class SharedSecret {

    static final int NONCE_SIZE = 32;
    static final int PROOF_SIZE = 32;
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

    /** The AUTH payload: the client's nonce and its proof. */
    byte[] clientAuth(byte[] serverNonce, byte[] clientNonce) {
        byte[] auth = Arrays.copyOf(clientNonce, NONCE_SIZE + PROOF_SIZE);
        System.arraycopy(proof("sr3 client proof", serverNonce, clientNonce), 0, auth, NONCE_SIZE, PROOF_SIZE);
        return auth;
    }

    /** The client nonce of a well-formed AUTH payload whose proof is right; null otherwise. */
    @Nullable
    byte[] acceptClientAuth(byte[] serverNonce, byte[] auth) {
        if (auth.length != NONCE_SIZE + PROOF_SIZE) {
            return null;
        }
        byte[] clientNonce = Arrays.copyOf(auth, NONCE_SIZE);
        byte[] proof = Arrays.copyOfRange(auth, NONCE_SIZE, auth.length);
        if (secret != null && !MessageDigest.isEqual(proof("sr3 client proof", serverNonce, clientNonce), proof)) {
            return null;
        }
        return clientNonce;
    }

    byte[] serverProof(byte[] serverNonce, byte[] clientNonce) {
        return proof("sr3 server proof", serverNonce, clientNonce);
    }

    boolean acceptsServerProof(byte[] serverNonce, byte[] clientNonce, byte[] proof) {
        return proof.length == PROOF_SIZE
                && (secret == null || MessageDigest.isEqual(serverProof(serverNonce, clientNonce), proof));
    }

    /** The seal of frames the client sends, or null without a secret. */
    @Nullable
    FrameSeal clientToServer(byte[] serverNonce, byte[] clientNonce) {
        return secret == null ? null : new FrameSeal(proof("sr3 seal client to server", serverNonce, clientNonce));
    }

    /** The seal of frames the server sends, or null without a secret. */
    @Nullable
    FrameSeal serverToClient(byte[] serverNonce, byte[] clientNonce) {
        return secret == null ? null : new FrameSeal(proof("sr3 seal server to client", serverNonce, clientNonce));
    }

    private byte[] proof(String label, byte[] serverNonce, byte[] clientNonce) {
        if (secret == null) {
            return new byte[PROOF_SIZE];
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label.getBytes(StandardCharsets.US_ASCII));
            mac.update(serverNonce);
            mac.update(clientNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }
}
