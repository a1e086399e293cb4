package io.sr3.flink.tls;

import io.sr3.flink.transport.TlsSettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for TLS tests, made with the JDK's {@code keytool}: a CA, and PKCS12 keystores of
 * nodes whose certificates it signed (or that another CA signed, or that have expired), plus a
 * truststore holding the CA. Every store's password is {@link #PASSWORD}.
 */
public final class TestCertificates {

    public static final String PASSWORD = "test-password";

    private final Path directory;
    private final String caName;

    private TestCertificates(Path directory, String caName) {
        this.directory = directory;
        this.caName = caName;
    }

    /** A new CA named {@code caName}, with its files in {@code directory}. */
    public static TestCertificates newCa(Path directory, String caName) throws IOException {
        Files.createDirectories(directory);
        TestCertificates ca = new TestCertificates(directory, caName);
        ca.keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + caName,
                "-ext", "bc:c", "-validity", "3", "-keystore", ca.file("ca.p12"), "-storetype", "PKCS12",
                "-storepass", PASSWORD, "-keypass", PASSWORD);
        ca.keytool("-exportcert", "-alias", "ca", "-keystore", ca.file("ca.p12"), "-storepass", PASSWORD, "-rfc",
                "-file", ca.file("ca.crt"));
        ca.keytool("-importcert", "-noprompt", "-alias", "ca", "-file", ca.file("ca.crt"), "-keystore",
                ca.file("truststore.p12"), "-storetype", "PKCS12", "-storepass", PASSWORD);
        return ca;
    }

    /** The truststore that holds this CA's certificate. */
    public Path truststore() {
        return Paths.get(file("truststore.p12"));
    }

    /**
     * A keystore with a key and a certificate for {@code name} that this CA signed, valid from
     * yesterday for 3 days, for the host names {@code localhost} and {@code 127.0.0.1} (Flink's own
     * TLS checks host names; the ring does not).
     */
    public Path node(String name) throws IOException {
        return signed(name, "-1d", 3);
    }

    /** Like {@link #node}, but the certificate expired yesterday. */
    public Path expiredNode(String name) throws IOException {
        return signed(name, "-3d", 2);
    }

    private Path signed(String name, String startDate, int validityDays) throws IOException {
        String keystore = file(name + ".p12");
        keytool("-genkeypair", "-alias", "node", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=" + name,
                "-validity", "3", "-keystore", keystore, "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass",
                PASSWORD);
        keytool("-certreq", "-alias", "node", "-keystore", keystore, "-storepass", PASSWORD, "-file", file(name + ".csr"));
        keytool("-gencert", "-alias", "ca", "-keystore", file("ca.p12"), "-storepass", PASSWORD, "-infile",
                file(name + ".csr"), "-outfile", file(name + ".crt"), "-rfc", "-startdate", startDate, "-validity",
                String.valueOf(validityDays), "-ext", "ku:c=digitalSignature,keyEncipherment", "-ext",
                "eku=serverAuth,clientAuth", "-ext", "san=dns:localhost,ip:127.0.0.1");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", file("ca.crt"), "-keystore", keystore,
                "-storepass", PASSWORD);
        keytool("-importcert", "-noprompt", "-alias", "node", "-file", file(name + ".crt"), "-keystore", keystore,
                "-storepass", PASSWORD);
        return Paths.get(keystore);
    }

    /** TLS settings of a node with {@code keystore} that trusts this CA, as Flink's defaults would give them. */
    public TlsSettings settings(Path keystore) {
        return new TlsSettings(keystore, "pkcs12", PASSWORD, PASSWORD, truststore(), "pkcs12", PASSWORD,
                List.of("TLSv1.2"), List.of("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"));
    }

    private String file(String name) {
        return directory.resolve(caName + "-" + name).toString();
    }

    private void keytool(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("keytool did not finish within 60 s: " + command);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while running keytool", e);
        }
        String output = new String(process.getInputStream().readAllBytes());
        if (process.exitValue() != 0) {
            throw new IOException("keytool failed (" + process.exitValue() + "): " + command + "\n" + output);
        }
    }
}
