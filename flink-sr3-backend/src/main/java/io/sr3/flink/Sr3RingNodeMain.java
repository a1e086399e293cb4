package io.sr3.flink;

import io.sr3.flink.node.NodeConfig;
import io.sr3.flink.node.RingNode;
import org.apache.flink.configuration.Configuration;

import java.io.IOException;
import java.io.InputStream;

/**
 * Runs one ring node as its own process, outside Flink: for operators who want to inspect a ring,
 * and for tests that need a peer in another process.
 *
 * <pre>
 * java -cp flink-sr3-backend.jar:flink-core.jar:... io.sr3.flink.Sr3RingNodeMain sr3.ring.port=6130 sr3.ring.seeds=host:6130
 * </pre>
 *
 * <p>Arguments are {@code sr3.*} options as {@code key=value}, validated like Flink's own
 * configuration. Prints {@code READY <host:port>} once the node serves, and stops when its
 * standard input closes (so a parent that dies takes it along) or on SIGTERM.
 */
public final class Sr3RingNodeMain {

    private Sr3RingNodeMain() {}

    public static void main(String[] args) throws IOException {
        Configuration config = new Configuration();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                System.err.println("Expected key=value, got '" + arg + "'");
                System.exit(2);
            }
            config.setString(arg.substring(0, eq), arg.substring(eq + 1));
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
}
