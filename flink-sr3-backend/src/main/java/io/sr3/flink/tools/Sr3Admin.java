package io.sr3.flink.tools;

import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;
import java.util.List;

/**
 * The operator's command line of flink-sr3: asks a running ring what it holds ({@code ring},
 * {@code ls}, {@code du}), checks every replica of files and checkpoints ({@code fsck}) and copies
 * them out to another Flink file system ({@code cp}).
 *
 * <pre>
 * java -cp flink-sr3-backend.jar io.sr3.flink.tools.Sr3Admin --help
 * java -cp "flink-sr3-backend.jar:$FLINK_HOME/lib/*" io.sr3.flink.tools.Sr3Admin --conf-dir $FLINK_HOME/conf ring
 * </pre>
 *
 * <p>It joins the ring as a storage-less client, like a JobManager ({@code sr3.ring.role: client}):
 * it is never a member of placement and stores nothing. This class and {@link AdminArguments} use
 * no Flink class, so {@code --help} and usage errors run with this jar alone; the commands
 * themselves ({@link AdminCommands}) are loaded only once Flink's classes are found.
 */
public final class Sr3Admin {

    /** Commands in the order the help lists them. */
    static final List<String> COMMAND_ORDER = List.of("ring", "ls", "du", "fsck", "cp", "help");

    /** Exit code of a healthy answer. */
    static final int OK = 0;
    /** Exit code when a file cannot be read (fsck) or a command failed. */
    static final int FAILED = 1;
    /** Exit code of a usage or configuration error. */
    static final int USAGE = 2;

    /** A class of flink-core and one of flink-runtime: the jars every command but help needs. */
    private static final List<String> FLINK_CLASSES = List.of("org.apache.flink.core.fs.FileSystem",
            "org.apache.flink.runtime.checkpoint.Checkpoints", "org.slf4j.LoggerFactory");

    private Sr3Admin() {}

    public static void main(String[] args) {
        System.exit(run(Arrays.asList(args), System.out, System.err));
    }

    /** Runs one command line; returns the exit code. */
    static int run(List<String> args, PrintStream out, PrintStream err) {
        AdminArguments arguments;
        try {
            arguments = AdminArguments.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("sr3: " + e.getMessage());
            err.println("Run 'sr3 --help' for the commands and options.");
            return USAGE;
        }
        if (!arguments.needsRing()) {
            out.print(arguments.operands().isEmpty() ? usage() : help(arguments.operands().get(0)));
            return OK;
        }
        String missing = missingFlinkClass();
        if (missing != null) {
            err.println("sr3 " + arguments.command() + " needs Flink's classes (" + missing + " is not on the class "
                    + "path). Add the jars of Flink's lib/ directory:");
            err.println("  java -cp \"flink-sr3-backend.jar:$FLINK_HOME/lib/*\" " + Sr3Admin.class.getName() + " "
                    + String.join(" ", args));
            err.println("To read hdfs:// or s3:// as well, set FLINK_PLUGINS_DIR=$FLINK_HOME/plugins (and, for "
                    + "hdfs://, HADOOP_CLASSPATH).");
            return USAGE;
        }
        try {
            // Reflection keeps AdminCommands, which links Flink's classes, out of this class's verification.
            Object code = Class.forName(Sr3Admin.class.getPackageName() + ".AdminCommands")
                    .getMethod("run", AdminArguments.class, PrintStream.class, PrintStream.class)
                    .invoke(null, arguments, out, err);
            return (Integer) code;
        } catch (InvocationTargetException e) {
            err.println("sr3 " + arguments.command() + " failed: " + e.getCause());
            return FAILED;
        } catch (ReflectiveOperationException e) {
            err.println("sr3: this jar is incomplete: " + e);
            return USAGE;
        }
    }

    /** The first Flink class the commands need that cannot be loaded, or null if all load. */
    private static String missingFlinkClass() {
        for (String name : FLINK_CLASSES) {
            try {
                Class.forName(name, false, Sr3Admin.class.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                return name;
            }
        }
        return null;
    }

    static String usage() {
        return """
                Usage: sr3 [connection options] COMMAND [command options] [PATH...]

                Looks into a running flink-sr3 ring, as a client that stores nothing.

                Commands:
                  ring                 members, zones, bytes stored, under-replicated blocks and pending repair of every node
                  ls [-R] PATH         the files and directories under an sr3:// path (-R: recursively)
                  du [-s] PATH         bytes and files under each entry of an sr3:// path (-s: the total only)
                  fsck [--blocks] PATH every file, block and replica under a path or of a checkpoint (a directory with
                                       _metadata, and every file its state handles name): checksums verified on every
                                       replica; missing, corrupt and under-replicated blocks listed (--blocks: every block
                                       and replica). Exit code 1 when a file cannot be read.
                  cp [--overwrite] SRC DST
                                       copies a file or directory tree to another Flink file system (file://, hdfs://,
                                       s3://, or sr3:// back again); a checkpoint directory is copied with every file
                                       its _metadata names, keeping their layout, so copying it back restores it
                  help [COMMAND]       this text, or one command's

                Connection (the cluster's own settings and credentials):
                  --conf-dir DIR       read DIR/config.yaml of the Flink cluster: sr3.ring.seeds, sr3.transport.secret,
                                       security.ssl.internal.* and every other sr3.* option from there
                  --seeds LIST         host:port of ring nodes, separated by ',' or ';' (a DNS name counts as every
                                       address it resolves to)
                  --secret-file PATH   the shared secret (sr3.transport.secret), one line; or the environment variable
                                       SR3_TRANSPORT_SECRET
                  --keystore PATH      mutual TLS: a key and certificate the ring's truststore accepts (PKCS12 unless
                                       -Dsr3.transport.ssl.keystore-type=...)
                  --keystore-password-file PATH
                  --truststore PATH    the CA the ring's certificates are signed by
                  --truststore-password-file PATH
                  -D key=value         any other option, e.g. -Dsr3.ring.replication-factor=3 (the copies
                                       of files that do not record their own)
                                       or -Dsr3.transport.request-timeout=30s
                Secrets are never taken from the command line.

                Exit codes: 0 healthy, 1 a file cannot be read or the command failed, 2 usage or configuration error.

                Every command but help needs Flink's classes:
                  java -cp "flink-sr3-backend.jar:$FLINK_HOME/lib/*" io.sr3.flink.tools.Sr3Admin --conf-dir $FLINK_HOME/conf ring
                """;
    }

    static String help(String command) {
        return switch (command) {
            case "ring" -> """
                    sr3 ring: one line per storage member of the ring, as this client sees it: address, node id,
                    zone, bytes stored, under-replicated blocks (its last repair scan), whether a repair is pending,
                    and the ring size it sees itself. A member that does not answer is listed as unreachable.
                    """;
            case "ls" -> """
                    sr3 ls [-R] PATH: type, length, replicas of the first block, modification time and path of
                    every entry of an sr3:// directory (or of the file itself). -R lists subdirectories too.
                    """;
            case "du" -> """
                    sr3 du [-s] PATH: bytes and files under each entry of an sr3:// directory, then the total
                    (-s: the total only). Bytes are file lengths; the ring stores each of them replication-factor times.
                    """;
            case "fsck" -> """
                    sr3 fsck [--blocks] PATH: reads every replica of every block of every file under PATH and
                    verifies its length and CRC32C against the file's manifest. When PATH is a checkpoint (a
                    directory holding _metadata, or the _metadata file), the files its state handles name are
                    checked as well (RocksDB's shared files live outside chk-N). Lists missing, corrupt and
                    unreachable replicas and under-replicated blocks (fewer intact replicas than
                    sr3.ring.replication-factor); --blocks lists every block and replica.
                    Status HEALTHY or UNDER-REPLICATED: exit code 0. Status CORRUPT (a file that cannot be read,
                    a block without an intact replica, a checkpoint file that does not exist): exit code 1.
                    """;
            case "cp" -> """
                    sr3 cp [--overwrite] SRC DST: copies the file or directory tree SRC to DST, which names the
                    copy (like hdfs dfs -cp); either may be on any Flink file system. When SRC is a checkpoint
                    directory on sr3://, the files its _metadata names outside it (RocksDB's shared/ files) are
                    copied too, at the same place relative to DST as to SRC, so that copying the tree back
                    (sr3 cp BACKUP/job sr3:///checkpoints/job) puts every file where _metadata expects it.
                    Every block read is verified; existing files are not overwritten without --overwrite.
                    """;
            default -> usage();
        };
    }
}
