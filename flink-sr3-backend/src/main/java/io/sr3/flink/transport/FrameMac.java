package io.sr3.flink.transport;


import javax.annotation.concurrent.NotThreadSafe;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The message authentication of one direction of an authenticated connection:
 * {@code HMAC-SHA256(key, seq | header | payload)} after every frame, where {@code seq} counts
 * the frames of that direction from 0 and is never sent. A frame that was injected, altered,
 * replayed, reordered or dropped fails the next check, and the connection closes. Used by one
 * channel's encoder or decoder, on its event loop.
 */
@NotThreadSafe
final class FrameMac {

    static final int SIZE = 32;

    private final Mac mac;
    private long sequence;

    FrameMac(byte[] key) {
        try {
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }

    /** The MAC of the next frame, whose header and payload are the remaining bytes of {@code parts}, in order. */
    byte[] next(ByteBuffer... parts) {
        mac.update(longBytes(sequence++));
        for (ByteBuffer part : parts) {
            mac.update(part.duplicate());
        }
        return mac.doFinal();
    }

    /** Whether {@code received} is the MAC of the next frame; consumes its sequence number either way. */
    boolean verifyNext(ByteBuffer[] frame, byte[] received) {
        return MessageDigest.isEqual(next(frame), received);
    }

    private static byte[] longBytes(long value) {
        byte[] bytes = new byte[8];
        for (int i = 7; i >= 0; i--) {
            bytes[i] = (byte) value;
            value >>>= 8;
        }
        return bytes;
    }
}
