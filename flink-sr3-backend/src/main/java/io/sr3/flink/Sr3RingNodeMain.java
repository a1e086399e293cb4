package io.sr3.flink;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.configuration.Configuration;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Runs one ring node as its own process, outside Flink: for operators who want to inspect a ring,
 * and for tests that need a peer in another process.
 *
 * <pre>
 * SR3_TRANSPORT_SECRET=... java -cp flink-sr3-backend.jar:flink-core.jar:... io.sr3.flink.Sr3RingNodeMain \
 *     sr3.ring.port=6130 sr3.ring.seeds=host:6130
 * java -cp ... io.sr3.flink.Sr3RingNodeMain --secret-file /etc/sr3/secret sr3.ring.port=6130
 * </pre>
 *
 * <p>Arguments are {@code sr3.*} options as {@code key=value}, validated like Flink's own
 * configuration. The shared secret ({@code sr3.transport.secret}) never comes from the command
 * line, which every user of the machine can read ({@code ps}): it is read from the file that
 * {@code --secret-file PATH} names (one trailing line break is dropped), or from the environment
 * variable {@value #SECRET_ENVIRONMENT_VARIABLE}. Prints {@code READY <host:port>} once the node
 * serves, and stops when its standard input closes (so a parent that dies takes it along) or on
 * SIGTERM.
 */
public final class Sr3RingNodeMain {

    /** The environment variable that may carry the shared secret instead of {@code --secret-file}. */
    public static final String SECRET_ENVIRONMENT_VARIABLE = "SR3_TRANSPORT_SECRET";

    static final String SECRET_FILE_ARGUMENT = "--secret-file";

    private static final String HOW_TO_PASS_THE_SECRET = "pass it in a file readable only by this node's user with "
            + SECRET_FILE_ARGUMENT + " PATH, or in the environment variable " + SECRET_ENVIRONMENT_VARIABLE;

    private Sr3RingNodeMain() {}

    public static void main(String[] args) throws IOException {
        Configuration config;
        try {
            config = configuration(Arrays.asList(args), System.getenv());
        } catch (IllegalArgumentException | IOException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        NodeConfig nodeConfig = Sr3Options.nodeConfig(config);
        RingNode node = RingNode.start(nodeConfig);
        Runtime.getRuntime().addShutdownHook(new Thread(node::close, "sr3-shutdown"));
        System.out.println("READY " + node.self().id());
        System.out.flush();
        InputStream in = System.in;
        while (in.read() >= 0) {
            // Ignore input; the node runs until the parent closes the pipe.
        }
        node.close();
    }

    /**
     * The configuration that the command line {@code args} and the {@code environment} describe:
     * every {@code key=value} argument, and the secret from {@code --secret-file} or {@value
     * #SECRET_ENVIRONMENT_VARIABLE}.
     *
     * @throws IllegalArgumentException with a message for the operator, if an argument is not
     *     {@code key=value}, carries the secret itself ({@code --secret}, {@code
     *     sr3.transport.secret=...}), or the secret is given twice, in an empty file or empty
     * @throws IOException if the secret file cannot be read
     */
    @VisibleForTesting
    public static Configuration configuration(List<String> args, Map<String, String> environment) throws IOException {
        Configuration config = new Configuration();
        Path secretFile = null;
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals(SECRET_FILE_ARGUMENT) || arg.startsWith(SECRET_FILE_ARGUMENT + "=")) {
                if (secretFile != null) {
                    throw new IllegalArgumentException(SECRET_FILE_ARGUMENT + " is given twice");
                }
                String path = arg.equals(SECRET_FILE_ARGUMENT)
                        ? (i + 1 < args.size() ? args.get(++i) : "")
                        : arg.substring(SECRET_FILE_ARGUMENT.length() + 1);
                if (path.isEmpty()) {
                    throw new IllegalArgumentException(SECRET_FILE_ARGUMENT + " needs the path of the file that holds "
                            + "the secret");
                }
                secretFile = Path.of(path);
                continue;
            }
            if (arg.equals("--secret") || arg.startsWith("--secret=")) {
                throw new IllegalArgumentException("Refusing --secret: a secret on the command line is visible to "
                        + "every user of this machine; " + HOW_TO_PASS_THE_SECRET);
            }
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("Expected key=value or " + SECRET_FILE_ARGUMENT + " PATH, got '"
                        + arg + "'");
            }
            String key = arg.substring(0, eq).trim();
            if (key.equals(Sr3Options.TRANSPORT_SECRET.key())) {
                throw new IllegalArgumentException("Refusing " + key + " on the command line, where every user of "
                        + "this machine can read it; " + HOW_TO_PASS_THE_SECRET);
            }
            config.setString(key, arg.substring(eq + 1));
        }
        String fromEnvironment = environment.get(SECRET_ENVIRONMENT_VARIABLE);
        if (secretFile != null && fromEnvironment != null) {
            throw new IllegalArgumentException("The secret is given twice, in " + SECRET_FILE_ARGUMENT + " " + secretFile
                    + " and in " + SECRET_ENVIRONMENT_VARIABLE + ": give it once");
        }
        if (secretFile != null) {
            config.set(Sr3Options.TRANSPORT_SECRET, readSecret(secretFile));
        } else if (fromEnvironment != null) {
            if (fromEnvironment.isEmpty()) {
                throw new IllegalArgumentException(SECRET_ENVIRONMENT_VARIABLE + " is set but empty");
            }
            config.set(Sr3Options.TRANSPORT_SECRET, fromEnvironment);
        }
        return config;
    }

    /** The file's content without one trailing line break (as {@code echo} writes it). */
    private static String readSecret(Path file) throws IOException {
        String secret;
        try {
            secret = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IOException("Could not read the sr3 secret file " + file + " (" + SECRET_FILE_ARGUMENT + "): "
                    + e.getMessage(), e);
        }
        if (secret.endsWith("\r\n")) {
            secret = secret.substring(0, secret.length() - 2);
        } else if (secret.endsWith("\n")) {
            secret = secret.substring(0, secret.length() - 1);
        }
        if (secret.isEmpty()) {
            throw new IllegalArgumentException("The sr3 secret file " + file + " (" + SECRET_FILE_ARGUMENT + ") is empty");
        }
        return secret;
    }
}
