package io.sr3.flink.fs;

import org.apache.flink.core.fs.Path;

import javax.annotation.concurrent.ThreadSafe;

import java.net.URI;

/**
 * The paths of one {@code sr3://} namespace (the URI authority) and the normalized keys their
 * manifests record: {@code sr3://a/x/} and {@code x} in namespace {@code a} are both {@code /a/x},
 * so {@code sr3://a/x} and {@code sr3://b/x} are different files.
 */
@ThreadSafe
final class NamespacePaths {

    private final String namespace;
    private final URI uri;

    NamespacePaths(URI fsUri) {
        String authority = fsUri.getAuthority();
        this.namespace = authority == null ? "" : authority;
        this.uri = URI.create(Sr3FileSystemFactory.SCHEME + "://" + namespace + "/");
    }

    /** The root of the namespace, {@code sr3://<namespace>/}. */
    URI uri() {
        return uri;
    }

    /** "/a/b" for any form of the path; relative paths are taken from the root. */
    String normalize(Path path) {
        URI pathUri = path.toUri();
        if (pathUri.getScheme() != null && !Sr3FileSystemFactory.SCHEME.equals(pathUri.getScheme())) {
            throw new IllegalArgumentException("Path " + path + " is not an sr3:// path");
        }
        String authority = pathUri.getAuthority() == null ? "" : pathUri.getAuthority();
        if (pathUri.getScheme() != null && !authority.equals(namespace)) {
            throw new IllegalArgumentException("Path " + path + " belongs to sr3://" + authority + "/, not to " + uri);
        }
        String p = pathUri.getPath();
        if (p == null || p.isEmpty()) {
            return NamespaceKeys.ROOT;
        }
        if (!p.startsWith("/")) {
            p = "/" + p;
        }
        while (p.length() > 1 && p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return namespace.isEmpty() ? p : "/" + namespace + p;
    }

    /** The {@code sr3://} path a normalized key stands for, as users wrote it: for messages and statuses. */
    String display(String key) {
        String p = namespace.isEmpty() ? key : key.substring(namespace.length() + 1);
        return Sr3FileSystemFactory.SCHEME + "://" + namespace + p;
    }
}
