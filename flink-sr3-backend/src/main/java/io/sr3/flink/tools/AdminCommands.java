package io.sr3.flink.tools;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;

/**
 * Runs one command of {@link Sr3Admin} over an {@link AdminConnection}; loaded only once Flink's
 * classes are known to be on the class path.
 */
final class AdminCommands {

    private AdminCommands() {}

    /** Called by {@link Sr3Admin} through reflection; returns the exit code. */
    public static int run(AdminArguments arguments, PrintStream out, PrintStream err) {
        try (AdminConnection connection = AdminConnection.open(arguments, System.getenv(), err)) {
            return switch (arguments.command()) {
                case "ring" -> new RingReport(connection, out).print();
                case "ls" -> new Listing(out).list(path(arguments, 0), arguments.hasFlag("-R"));
                case "du" -> new Listing(out).usage(path(arguments, 0), arguments.hasFlag("-s"));
                case "fsck" -> new Fsck(connection, out).check(path(arguments, 0), arguments.hasFlag("--blocks"));
                case "cp" -> new Copy(connection, out).copy(path(arguments, 0), path(arguments, 1),
                        arguments.hasFlag("--overwrite"));
                default -> throw new IllegalArgumentException("Unknown command " + arguments.command());
            };
        } catch (IllegalConfigurationException | IllegalArgumentException e) {
            err.println("sr3: " + e.getMessage());
            return Sr3Admin.USAGE;
        } catch (IOException | UncheckedIOException | IllegalStateException e) {
            err.println("sr3 " + arguments.command() + ": " + e.getMessage());
            return Sr3Admin.FAILED;
        }
    }

    private static Path path(AdminArguments arguments, int index) {
        return new Path(arguments.operands().get(index));
    }
}
