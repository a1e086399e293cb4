package io.sr3.flink.transport;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import java.util.Objects;

/**
 * Mutual TLS for ring connections: this node's key and certificate (keystore) and the
 * certificates it trusts (truststore), the protocols and cipher suites allowed. Both sides of
 * every connection present a certificate and refuse a peer whose certificate the truststore does
 * not accept; host names are not verified (as for Flink's internal TLS: the trust is in the
 * cluster's CA, not in DNS). By default these are Flink's {@code security.ssl.internal.*}
 * settings.
 */
public record TlsSettings(
        Path keystore,
        String keystoreType,
        String keystorePassword,
        String keyPassword,
        Path truststore,
        String truststoreType,
        String truststorePassword,
        List<String> protocols,
        List<String> cipherSuites) {

    public TlsSettings {
        Objects.requireNonNull(keystore, "keystore");
        Objects.requireNonNull(keystoreType, "keystoreType");
        Objects.requireNonNull(keystorePassword, "keystorePassword");
        Objects.requireNonNull(keyPassword, "keyPassword");
        Objects.requireNonNull(truststore, "truststore");
        Objects.requireNonNull(truststoreType, "truststoreType");
        Objects.requireNonNull(truststorePassword, "truststorePassword");
        protocols = List.copyOf(protocols);
        cipherSuites = List.copyOf(cipherSuites);
    }

    /** The server side: requires a client certificate. */
    SslContext serverContext() throws IOException {
        try {
            return SslContextBuilder.forServer(keyManagers())
                    .trustManager(trustManagers())
                    .clientAuth(ClientAuth.REQUIRE)
                    .sslProvider(SslProvider.JDK)
                    .protocols(protocols)
                    .ciphers(cipherSuites.isEmpty() ? null : cipherSuites)
                    .build();
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IOException("Could not set up sr3 TLS from " + this + ": " + e.getMessage(), e);
        }
    }

    /** The client side: presents this node's certificate. */
    SslContext clientContext() throws IOException {
        try {
            return SslContextBuilder.forClient()
                    .endpointIdentificationAlgorithm(null) // the trust is in the cluster's CA, not in host names
                    .keyManager(keyManagers())
                    .trustManager(trustManagers())
                    .sslProvider(SslProvider.JDK)
                    .protocols(protocols)
                    .ciphers(cipherSuites.isEmpty() ? null : cipherSuites)
                    .build();
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IOException("Could not set up sr3 TLS from " + this + ": " + e.getMessage(), e);
        }
    }

    private KeyManagerFactory keyManagers() throws IOException, GeneralSecurityException {
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        factory.init(load(keystore, keystoreType, keystorePassword, "keystore"), keyPassword.toCharArray());
        return factory;
    }

    private TrustManagerFactory trustManagers() throws IOException, GeneralSecurityException {
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(load(truststore, truststoreType, truststorePassword, "truststore"));
        return factory;
    }

    private static KeyStore load(Path file, String type, String password, String what) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            KeyStore store = KeyStore.getInstance(type);
            store.load(in, password.toCharArray());
            return store;
        } catch (IOException | GeneralSecurityException e) {
            throw new IOException("Could not load the sr3 TLS " + what + " " + file + " (type " + type + "): "
                    + e.getMessage(), e);
        }
    }

    /** Names the files and algorithms, never the passwords. */
    @Override
    public String toString() {
        return "TLS(keystore " + keystore + " (" + keystoreType + "), truststore " + truststore + " (" + truststoreType
                + "), protocols " + protocols + ", cipher suites " + (cipherSuites.isEmpty() ? "JDK default" : cipherSuites)
                + ")";
    }
}
