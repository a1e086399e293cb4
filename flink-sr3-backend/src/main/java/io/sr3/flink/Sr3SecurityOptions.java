package io.sr3.flink;

import io.sr3.flink.transport.TlsSettings;
import io.sr3.flink.transport.TransportLimits;
import io.sr3.flink.transport.TransportSecurity;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.SecurityOptions;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * How ring connections are secured: mutual TLS (by default Flink's own internal TLS settings), the
 * shared secret, and the limits a node's server keeps towards its peers.
 *
 * <p>Without TLS and without a secret, a ring of one process (no {@code sr3.ring.seeds}: a
 * MiniCluster, the demo) authenticates with a random secret of this JVM, so nothing outside it can
 * connect; any other ring node refuses to listen on an address other machines reach unless
 * {@code sr3.transport.authentication: none} says so.
 */
public final class Sr3SecurityOptions {

    private Sr3SecurityOptions() {}

    /** Whether an unauthenticated ring is allowed. */
    public enum Authentication {
        /** TLS or the shared secret is required on any address other machines can reach. */
        REQUIRED,
        /** Peers are not authenticated: any process that reaches the ring port is trusted. */
        NONE
    }

    /** Random per JVM: authenticates the nodes of a ring that lives in one process. */
    private static final String JVM_SECRET = newJvmSecret();

    private static String newJvmSecret() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    public static final ConfigOption<Authentication> AUTHENTICATION =
            ConfigOptions.key("sr3.transport.authentication")
                    .enumType(Authentication.class)
                    .defaultValue(Authentication.REQUIRED)
                    .withDescription("'required': a ring node that listens on an address other machines can reach "
                            + "refuses to start without TLS or sr3.transport.secret. 'none': run without "
                            + "authentication anyway (the node warns at start).");

    public static final ConfigOption<Boolean> SSL_ENABLED =
            ConfigOptions.key("sr3.transport.ssl.enabled")
                    .booleanType()
                    .defaultValue(false)
                    .withFallbackKeys(SecurityOptions.SSL_INTERNAL_ENABLED.key())
                    .withDescription("Mutual TLS on every ring connection. Default: security.ssl.internal.enabled, "
                            + "so one set of settings secures Flink's and the ring's connections. The keystore and "
                            + "truststore options below default to Flink's security.ssl.internal.* ones; protocols "
                            + "and cipher suites are Flink's security.ssl.protocol and security.ssl.algorithms.");

    public static final ConfigOption<String> SSL_KEYSTORE = fallback("keystore", SecurityOptions.SSL_INTERNAL_KEYSTORE,
            "This node's key and certificate (signed by a CA the other nodes trust).");

    public static final ConfigOption<String> SSL_KEYSTORE_PASSWORD = fallback("keystore-password",
            SecurityOptions.SSL_INTERNAL_KEYSTORE_PASSWORD, "Password of the keystore.");

    public static final ConfigOption<String> SSL_KEY_PASSWORD = fallback("key-password",
            SecurityOptions.SSL_INTERNAL_KEY_PASSWORD, "Password of the key in the keystore.");

    public static final ConfigOption<String> SSL_KEYSTORE_TYPE = fallback("keystore-type",
            SecurityOptions.SSL_INTERNAL_KEYSTORE_TYPE, "Keystore type, e.g. pkcs12 or jks (default pkcs12).");

    public static final ConfigOption<String> SSL_TRUSTSTORE = fallback("truststore",
            SecurityOptions.SSL_INTERNAL_TRUSTSTORE, "The certificates this node accepts from peers (the cluster's CA).");

    public static final ConfigOption<String> SSL_TRUSTSTORE_PASSWORD = fallback("truststore-password",
            SecurityOptions.SSL_INTERNAL_TRUSTSTORE_PASSWORD, "Password of the truststore.");

    public static final ConfigOption<String> SSL_TRUSTSTORE_TYPE = fallback("truststore-type",
            SecurityOptions.SSL_INTERNAL_TRUSTSTORE_TYPE, "Truststore type (default pkcs12).");

    public static final ConfigOption<Duration> HANDSHAKE_TIMEOUT =
            ConfigOptions.key("sr3.transport.handshake-timeout")
                    .durationType()
                    .defaultValue(TransportLimits.defaults().handshakeTimeout())
                    .withDescription("A connection that has not completed TLS and the ring handshake this long after "
                            + "it was accepted is closed.");

    public static final ConfigOption<Duration> IDLE_TIMEOUT =
            ConfigOptions.key("sr3.transport.idle-timeout")
                    .durationType()
                    .defaultValue(TransportLimits.defaults().idleTimeout())
                    .withDescription("A connection silent this long is closed (members ping each other every "
                            + "sr3.ring.failure-detector.interval, so theirs stay open).");

    public static final ConfigOption<Integer> MAX_CONNECTIONS =
            ConfigOptions.key("sr3.transport.max-connections")
                    .intType()
                    .defaultValue(TransportLimits.defaults().maxConnections())
                    .withDescription("Connections a node's ring server keeps open at once; more are closed at once.");

    public static final ConfigOption<Integer> MAX_CONNECTIONS_PER_ADDRESS =
            ConfigOptions.key("sr3.transport.max-connections-per-address")
                    .intType()
                    .defaultValue(TransportLimits.defaults().maxConnectionsPerAddress())
                    .withDescription("Connections a node's ring server keeps open at once from one IP address.");

    private static ConfigOption<String> fallback(String name, ConfigOption<String> flinkOption, String what) {
        var builder = ConfigOptions.key("sr3.transport.ssl." + name).stringType();
        ConfigOption<String> option = flinkOption.hasDefaultValue()
                ? builder.defaultValue(flinkOption.defaultValue())
                : builder.noDefaultValue();
        return option.withFallbackKeys(flinkOption.key())
                .withDescription(what + " Default: " + flinkOption.key() + ".");
    }

    /** The options, in the order the README lists them. */
    public static List<ConfigOption<?>> all() {
        return List.of(AUTHENTICATION, SSL_ENABLED, SSL_KEYSTORE, SSL_KEYSTORE_PASSWORD, SSL_KEY_PASSWORD,
                SSL_KEYSTORE_TYPE, SSL_TRUSTSTORE, SSL_TRUSTSTORE_PASSWORD, SSL_TRUSTSTORE_TYPE, HANDSHAKE_TIMEOUT,
                IDLE_TIMEOUT, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS);
    }

    /**
     * The security of a node's ring connections.
     *
     * @param secret {@code sr3.transport.secret}, null if not set
     * @param seeds the node's seeds: none means a ring of one process
     */
    static TransportSecurity security(ReadableConfig config, Map<String, String> raw, String secret, List<String> seeds) {
        Authentication authentication = NodeConfigReader.get(config, raw, AUTHENTICATION);
        TlsSettings tls = NodeConfigReader.get(config, raw, SSL_ENABLED) ? tls(config, raw) : null;
        if (tls == null && secret == null && seeds.isEmpty() && authentication == Authentication.REQUIRED) {
            secret = JVM_SECRET;
        }
        return new TransportSecurity(tls, secret, authentication == Authentication.NONE);
    }

    private static TlsSettings tls(ReadableConfig config, Map<String, String> raw) {
        String keystore = required(config, raw, SSL_KEYSTORE);
        String truststore = required(config, raw, SSL_TRUSTSTORE);
        NodeConfigReader.check(Files.isReadable(Paths.get(keystore)), SSL_KEYSTORE, raw, "no readable file there");
        NodeConfigReader.check(Files.isReadable(Paths.get(truststore)), SSL_TRUSTSTORE, raw, "no readable file there");
        String keystorePassword = required(config, raw, SSL_KEYSTORE_PASSWORD);
        String keyPassword = config.getOptional(SSL_KEY_PASSWORD).orElse(keystorePassword);
        List<String> protocols = split(config.get(SecurityOptions.SSL_PROTOCOL));
        List<String> ciphers = split(config.get(SecurityOptions.SSL_ALGORITHMS));
        return new TlsSettings(Paths.get(keystore), NodeConfigReader.get(config, raw, SSL_KEYSTORE_TYPE), keystorePassword,
                keyPassword, Paths.get(truststore), NodeConfigReader.get(config, raw, SSL_TRUSTSTORE_TYPE),
                required(config, raw, SSL_TRUSTSTORE_PASSWORD), protocols, ciphers);
    }

    private static String required(ReadableConfig config, Map<String, String> raw, ConfigOption<String> option) {
        String value = config.getOptional(option).orElse(null);
        if (value == null || value.isBlank()) {
            throw new IllegalConfigurationException("flink-sr3 TLS is on (" + SSL_ENABLED.key() + " or "
                    + SecurityOptions.SSL_INTERNAL_ENABLED.key() + ") but " + option.key() + " (or "
                    + String.join(", ", fallbackKeys(option)) + ") is not set");
        }
        return value.trim();
    }

    private static List<String> fallbackKeys(ConfigOption<?> option) {
        List<String> keys = new ArrayList<>();
        option.fallbackKeys().forEach(k -> keys.add(k.getKey()));
        return keys;
    }

    private static List<String> split(String list) {
        List<String> values = new ArrayList<>();
        for (String value : list.split(",")) {
            if (!value.isBlank()) {
                values.add(value.trim());
            }
        }
        return values;
    }

    static TransportLimits limits(ReadableConfig config, Map<String, String> raw) {
        Duration handshake = NodeConfigReader.get(config, raw, HANDSHAKE_TIMEOUT);
        NodeConfigReader.check(NodeConfigReader.isPositive(handshake), HANDSHAKE_TIMEOUT, raw, "must be a positive duration");
        Duration idle = NodeConfigReader.get(config, raw, IDLE_TIMEOUT);
        NodeConfigReader.check(NodeConfigReader.isPositive(idle), IDLE_TIMEOUT, raw, "must be a positive duration");
        int max = NodeConfigReader.get(config, raw, MAX_CONNECTIONS);
        NodeConfigReader.check(max >= 1, MAX_CONNECTIONS, raw, "must be at least 1");
        int perAddress = NodeConfigReader.get(config, raw, MAX_CONNECTIONS_PER_ADDRESS);
        NodeConfigReader.check(perAddress >= 1 && perAddress <= max, MAX_CONNECTIONS_PER_ADDRESS, raw,
                "must be between 1 and sr3.transport.max-connections (" + max + ")");
        return new TransportLimits(handshake, idle, max, perAddress);
    }
}
