package io.sr3.flink.fs;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Store keys of the namespace: a manifest's key is derived from its path and its parent's path,
 * so that one prefix scan finds every child of a directory.
 *
 * <pre>
 * manifest key:   "m-" + h(parent) + "-" + h(path)      h = first 16 hex digits of SHA-256
 * children of d:  prefix "m-" + h(d) + "-"
 * block key:      "b-" + file id + "-" + block index
 * </pre>
 */
final class NamespaceKeys {

    static final String ROOT = "/";

    private NamespaceKeys() {}

    static String manifestKey(String path) {
        return "m-" + hash(parent(path)) + "-" + hash(path);
    }

    static String childrenPrefix(String directory) {
        return "m-" + hash(directory) + "-";
    }

    static String blockKey(String fileId, int index) {
        return "b-" + fileId + "-" + index;
    }

    /** The parent of a normalized path ("/a/b" -> "/a", "/a" -> "/"); the root's parent is itself. */
    static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? ROOT : path.substring(0, slash);
    }

    private static String hash(String path) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(path.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }
}
