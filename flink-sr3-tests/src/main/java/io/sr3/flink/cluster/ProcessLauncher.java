package io.sr3.flink.cluster;

import org.apache.flink.util.FileUtils;

import javax.annotation.Nullable;
import javax.annotation.concurrent.NotThreadSafe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Starts Flink JVMs from this JVM's classpath, each in its own directory under one working
 * directory, and signals them by their process handle or PID only: never by name, never a process
 * it did not start. {@link #close} SIGKILLs every process it started.
 *
 * <p>A process directory holds {@code config.yaml}, {@code log4j2.properties}, {@code <name>.log},
 * {@code stdout.txt}/{@code stderr.txt}, and {@code tmp/} (its {@code java.io.tmpdir} and
 * {@code io.tmp.dirs}).
 */
@NotThreadSafe
public final class ProcessLauncher implements AutoCloseable {

    /** The add-opens list of Flink's default {@code env.java.opts.all}, for Java 17. */
    public static final List<String> JAVA_OPENS = List.of(
            "--add-exports=java.base/sun.net.util=ALL-UNNAMED", "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
            "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.text=ALL-UNNAMED",
            "--add-opens=java.base/java.time=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    private static final long KILL_WAIT_SECONDS = 30;

    private final Path workDir;
    private final String classpath = classpath();
    private final List<FlinkProcess> processes = new ArrayList<>();

    ProcessLauncher(Path workDir) {
        this.workDir = workDir;
    }

    /**
     * The classpath a child JVM gets: the test classpath under Surefire (it stands in for Flink's
     * {@code lib/}: Flink, the flink-sr3 jar and the test job classes), else this JVM's.
     */
    public static String classpath() {
        String testClasspath = System.getProperty("surefire.test.class.path");
        return testClasspath != null && !testClasspath.isBlank() ? testClasspath : System.getProperty("java.class.path");
    }

    /** This JVM's {@code java} binary. */
    public static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * Writes {@code config} (with {@code io.tmp.dirs} set to the process's {@code tmp/}) into
     * {@code <workDir>/<name>/} and starts {@code mainClass --configDir <that directory> args},
     * after {@code commandPrefix} (such as {@code ip netns exec <namespace>}, which execs the JVM).
     */
    FlinkProcess launch(String name, Map<String, String> config, String mainClass, List<String> args,
            List<String> jvmOptions, @Nullable String ringAddress, List<String> commandPrefix) throws IOException {
        Path dir = Files.createDirectories(workDir.resolve(name));
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        Path log = dir.resolve(name + ".log");
        config.put("io.tmp.dirs", tmp.toString());
        ClusterConfigWriter.write(dir, config, log);
        List<String> command = new ArrayList<>(commandPrefix);
        command.add(javaBinary());
        command.addAll(jvmOptions);
        command.add("-Djava.io.tmpdir=" + tmp);
        command.add("-Dlog4j2.configurationFile=" + dir.resolve("log4j2.properties").toUri());
        command.add("-Dlog.file=" + log);
        command.addAll(JAVA_OPENS);
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
        command.add("--configDir");
        command.add(dir.toString());
        command.addAll(args);
        Process process = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout.txt").toFile()))
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("stderr.txt").toFile()))
                .start();
        FlinkProcess flinkProcess = new FlinkProcess(name, process, dir, ringAddress);
        processes.add(flinkProcess);
        return flinkProcess;
    }

    /** Every process started, oldest first, dead ones included. */
    List<FlinkProcess> processes() {
        return Collections.unmodifiableList(processes);
    }

    /** The live process of this name, or null. */
    @Nullable
    FlinkProcess liveProcess(String name) {
        for (FlinkProcess p : processes) {
            if (p.name().equals(name) && p.isAlive()) {
                return p;
            }
        }
        return null;
    }

    /** SIGKILLs the given processes at the same moment, then waits until they are gone. */
    void kill(FlinkProcess... victims) throws InterruptedException {
        for (FlinkProcess victim : victims) {
            victim.process().destroyForcibly();
        }
        for (FlinkProcess victim : victims) {
            if (!victim.process().waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException(victim + " survived SIGKILL for " + KILL_WAIT_SECONDS + " s");
            }
        }
    }

    /** Sends {@code signal} (such as {@code -STOP}) to a live process this launcher started, by its PID. */
    void signal(FlinkProcess target, String signal) throws IOException, InterruptedException {
        if (!processes.contains(target)) {
            throw new IllegalArgumentException(target + " was not started by this cluster");
        }
        if (!target.isAlive()) {
            throw new IllegalStateException(target + " is not alive; cannot send " + signal);
        }
        Process kill = new ProcessBuilder("kill", signal, String.valueOf(target.pid())).redirectErrorStream(true).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS)) {
            kill.destroyForcibly();
            throw new IllegalStateException("kill " + signal + " " + target + " did not return within 10 s");
        }
        if (kill.exitValue() != 0) {
            throw new IllegalStateException("kill " + signal + " " + target + " exited with " + kill.exitValue() + ": "
                    + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    /** Fails naming the process's directory if it has exited. */
    static void assertAlive(FlinkProcess process) {
        if (!process.isAlive()) {
            throw new IllegalStateException(process + " exited with " + process.process().exitValue() + "; see "
                    + process.directory());
        }
    }

    /**
     * SIGKILLs every process started and deletes their {@code tmp/} and {@code store/}
     * directories; each process's {@code config.yaml}, log and stdout/stderr stay.
     */
    @Override
    public void close() {
        for (FlinkProcess p : processes) {
            p.process().destroyForcibly();
        }
        for (FlinkProcess p : processes) {
            try {
                p.process().waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        for (FlinkProcess p : processes) {
            if (!p.isAlive()) {
                FileUtils.deleteDirectoryQuietly(p.directory().resolve("tmp").toFile());
                FileUtils.deleteDirectoryQuietly(p.directory().resolve("store").toFile());
            }
        }
    }
}
