package io.sr3.flink.tools;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The command line of {@link Sr3Admin}, parsed without any Flink class so that {@code --help} and
 * usage errors need nothing but this jar.
 *
 * @param command the command ({@code ring}, {@code ls}, ...); {@code help} when none is given
 * @param operands what follows the command that is no option (paths)
 * @param flags switches given to the command ({@code -R}, {@code --blocks}, ...)
 * @param seeds {@code --seeds}, or null
 * @param confDir {@code --conf-dir}: a Flink configuration directory to read {@code config.yaml} from, or null
 * @param secretFile {@code --secret-file}, or null
 * @param keystore {@code --keystore}, or null
 * @param keystorePasswordFile {@code --keystore-password-file}, or null
 * @param truststore {@code --truststore}, or null
 * @param truststorePasswordFile {@code --truststore-password-file}, or null
 * @param properties {@code -D key=value} settings, in order
 */
record AdminArguments(String command, List<String> operands, Set<String> flags, String seeds, Path confDir,
        Path secretFile, Path keystore, Path keystorePasswordFile, Path truststore, Path truststorePasswordFile,
        Map<String, String> properties) {

    /** Commands and the switches each accepts. */
    static final Map<String, Set<String>> COMMANDS = Map.of(
            "help", Set.of(),
            "ring", Set.of(),
            "ls", Set.of("-R"),
            "du", Set.of("-s"),
            "fsck", Set.of("--blocks"),
            "cp", Set.of("--overwrite"));

    /** Operands each command takes: the fewest and the most. */
    private static final Map<String, int[]> OPERANDS = Map.of(
            "help", new int[] {0, 1},
            "ring", new int[] {0, 0},
            "ls", new int[] {1, 1},
            "du", new int[] {1, 1},
            "fsck", new int[] {1, 1},
            "cp", new int[] {2, 2});

    /** Keys whose values must never come from the command line, which every user of the machine can read. */
    private static final List<String> SECRET_KEY_PARTS = List.of("secret", "password");

    AdminArguments {
        operands = List.copyOf(operands);
        flags = Set.copyOf(flags);
        properties = Map.copyOf(properties);
    }

    /**
     * Parses a command line; options may come before or after the command.
     *
     * @throws IllegalArgumentException with a message for the operator
     */
    static AdminArguments parse(List<String> args) {
        String command = null;
        List<String> operands = new ArrayList<>();
        Set<String> flags = new LinkedHashSet<>();
        Map<String, String> options = new LinkedHashMap<>();
        Map<String, String> properties = new LinkedHashMap<>();
        boolean helpRequested = false;
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            String value = null;
            String name = arg;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            switch (name) {
                case "-h", "--help" -> helpRequested = true;
                case "--seeds", "--conf-dir", "--secret-file", "--keystore", "--keystore-password-file",
                        "--truststore", "--truststore-password-file" -> {
                    if (value == null) {
                        if (i + 1 >= args.size()) {
                            throw new IllegalArgumentException(name + " needs a value");
                        }
                        value = args.get(++i);
                    }
                    if (value.isEmpty()) {
                        throw new IllegalArgumentException(name + " needs a value");
                    }
                    if (options.put(name, value) != null) {
                        throw new IllegalArgumentException(name + " is given twice");
                    }
                }
                case "--secret", "--password", "--keystore-password", "--truststore-password" ->
                        throw new IllegalArgumentException("Refusing " + name + ": a secret on the command line is "
                                + "visible to every user of this machine (ps); put it in a file readable only by you "
                                + "and pass " + (name.equals("--secret") || name.equals("--password")
                                        ? "--secret-file" : name + "-file") + " PATH");
                default -> {
                    if (arg.startsWith("-D")) {
                        String setting = arg.length() > 2 ? arg.substring(2) : (i + 1 < args.size() ? args.get(++i) : "");
                        int sep = setting.indexOf('=');
                        if (sep <= 0) {
                            throw new IllegalArgumentException("-D needs key=value, got '" + setting + "'");
                        }
                        String key = setting.substring(0, sep).trim();
                        for (String part : SECRET_KEY_PARTS) {
                            if (key.toLowerCase().contains(part)) {
                                throw new IllegalArgumentException("Refusing -D" + key + ": a secret on the command "
                                        + "line is visible to every user of this machine; use --secret-file, "
                                        + "--keystore-password-file, --truststore-password-file or --conf-dir");
                            }
                        }
                        properties.put(key, setting.substring(sep + 1).trim());
                    } else if (command == null && !arg.startsWith("-")) {
                        if (!COMMANDS.containsKey(arg)) {
                            throw new IllegalArgumentException("Unknown command '" + arg + "'; commands: "
                                    + String.join(", ", Sr3Admin.COMMAND_ORDER));
                        }
                        command = arg;
                    } else if (arg.startsWith("-") && arg.length() > 1) {
                        if (command == null) {
                            throw new IllegalArgumentException("Unknown option '" + arg + "' (a command's own options, "
                                    + "like -R or --blocks, follow the command)");
                        }
                        if (!COMMANDS.get(command).contains(arg)) {
                            throw new IllegalArgumentException("Unknown option '" + arg + "' for '" + command + "'");
                        }
                        flags.add(arg);
                    } else {
                        operands.add(arg);
                    }
                }
            }
        }
        if (helpRequested) { // "sr3 --help", "sr3 fsck --help": the help of the command, whatever else is given
            List<String> topic = command == null || command.equals("help") ? List.of() : List.of(command);
            return new AdminArguments("help", topic, Set.of(), null, null, null, null, null, null, null, Map.of());
        }
        if (command == null) {
            command = "help";
        }
        int[] range = OPERANDS.get(command);
        if (operands.size() < range[0] || operands.size() > range[1]) {
            throw new IllegalArgumentException("'" + command + "' takes " + (range[0] == range[1]
                    ? String.valueOf(range[0]) : range[0] + " to " + range[1]) + " operand(s), got " + operands.size()
                    + (operands.isEmpty() ? "" : ": " + operands));
        }
        if (command.equals("help") && !operands.isEmpty() && !COMMANDS.containsKey(operands.get(0))) {
            throw new IllegalArgumentException("Unknown command '" + operands.get(0) + "'");
        }
        return new AdminArguments(command, operands, flags, options.get("--seeds"), path(options, "--conf-dir"),
                path(options, "--secret-file"), path(options, "--keystore"), path(options, "--keystore-password-file"),
                path(options, "--truststore"), path(options, "--truststore-password-file"), properties);
    }

    private static Path path(Map<String, String> options, String name) {
        String value = options.get(name);
        return value == null ? null : Path.of(value);
    }

    /** Whether the command needs a connection to a ring (and so Flink's classes). */
    boolean needsRing() {
        return !command.equals("help");
    }

    boolean hasFlag(String flag) {
        return flags.contains(flag);
    }
}
