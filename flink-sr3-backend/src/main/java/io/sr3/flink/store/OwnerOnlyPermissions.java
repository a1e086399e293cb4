package io.sr3.flink.store;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The owner-only permissions of a store's directory ({@code 0700}) and files ({@code 0600}) on file
 * systems that have POSIX permissions, because blocks are a company's checkpointed state.
 */
@ThreadSafe
final class OwnerOnlyPermissions {

    private static final Set<PosixFilePermission> OWNER_ONLY_DIRECTORY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
    private static final FileAttribute<?>[] NO_ATTRIBUTES = new FileAttribute<?>[0];

    private OwnerOnlyPermissions() {}

    /**
     * Creates {@code directory} and its missing parents readable by their owner only ({@code
     * 0700}) where the file system has POSIX permissions, with its defaults elsewhere. An existing
     * directory is left as it is.
     */
    static Path createDirectory(Path directory) throws IOException {
        if (Files.isDirectory(directory) || !isPosix(directory)) {
            return Files.createDirectories(directory);
        }
        return Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIRECTORY));
    }

    /**
     * The attributes that create a file in {@code directory} readable by its owner only ({@code
     * 0600}); none where the file system has no POSIX permissions.
     */
    static FileAttribute<?>[] fileAttributes(Path directory) {
        return isPosix(directory)
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY_FILE)}
                : NO_ATTRIBUTES;
    }

    private static boolean isPosix(Path path) {
        return path.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    /**
     * The permissions of {@code directory} as {@code rwxr-x---} if they let users other than its
     * owner in (a directory made before, or by hand); null if they do not, or where the file system
     * has no POSIX permissions.
     */
    @Nullable
    static String othersMayEnter(Path directory) throws IOException {
        if (!isPosix(directory)) {
            return null;
        }
        Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(directory);
        return OWNER_ONLY_DIRECTORY.containsAll(permissions) ? null : PosixFilePermissions.toString(permissions);
    }
}
