package io.sr3.flink.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What a result file needs to say about the machine it was measured on.
 *
 * @param processors processors available to this JVM ({@code nproc})
 * @param memTotal total memory, as {@code /proc/meminfo} says it
 * @param cpuModel the first {@code model name} of {@code /proc/cpuinfo}
 * @param kernel {@code /proc/sys/kernel/osrelease} and the OS architecture
 * @param javaVersion the output of {@code java -version} of this JVM's {@code java}
 * @param loadAverage {@code /proc/loadavg} when the description was taken (others share the machine)
 */
public record MachineDescription(int processors, String memTotal, String cpuModel, String kernel, String javaVersion,
        String loadAverage) {

    public static MachineDescription ofThisMachine() {
        return new MachineDescription(
                Runtime.getRuntime().availableProcessors(),
                firstLine(Path.of("/proc/meminfo"), "MemTotal:"),
                firstLine(Path.of("/proc/cpuinfo"), "model name"),
                read(Path.of("/proc/sys/kernel/osrelease")) + " (" + System.getProperty("os.name") + ", "
                        + System.getProperty("os.arch") + ")",
                readJavaVersion(),
                read(Path.of("/proc/loadavg")));
    }

    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("nproc", processors);
        m.put("memTotal", memTotal);
        m.put("cpuModel", cpuModel);
        m.put("kernel", kernel);
        m.put("javaVersion", javaVersion);
        m.put("loadAverageAtStart", loadAverage);
        return m;
    }

    private static String firstLine(Path file, String prefix) {
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (line.startsWith(prefix)) {
                    int colon = line.indexOf(':');
                    return line.substring(colon + 1).trim();
                }
            }
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
        return "unknown";
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String readJavaVersion() {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        try {
            Process p = new ProcessBuilder(List.of(java.toString(), "-version")).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            p.waitFor(10, TimeUnit.SECONDS);
            return out.replace('\n', ' ').replaceAll("\\s+", " ");
        } catch (IOException e) {
            return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return System.getProperty("java.runtime.version");
        }
    }
}
