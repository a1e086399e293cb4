package io.sr3.flink.node;

import io.sr3.flink.store.BlockNotFoundException;
import io.sr3.flink.store.CorruptBlockException;
import io.sr3.flink.transport.ErrorCode;
import io.sr3.flink.transport.RemoteException;

import java.io.IOException;

/**
 * A relayed block fetch failed. The code says how: {@link ErrorCode#CORRUPT} (a node on the
 * route refused the block's checksum; another replica must be used), {@link ErrorCode#NOT_FOUND}
 * (the holder does not have it) or {@link ErrorCode#UPSTREAM_FAILED} (a hop could not be
 * reached). The message names the block and the nodes involved, and survives being passed down
 * the route.
 */
public final class RelayException extends IOException {

    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    public RelayException(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }

    /** Classifies why fetching {@code key} from {@code source} failed at {@code at}. */
    static RelayException from(Throwable error, String key, String source, String at) {
        if (error instanceof RelayException relay) {
            return relay;
        }
        if (error instanceof RemoteException remote) {
            ErrorCode code = remote.code() == ErrorCode.INTERNAL ? ErrorCode.UPSTREAM_FAILED : remote.code();
            return new RelayException(code, remote.getMessage());
        }
        if (error instanceof CorruptBlockException) {
            return new RelayException(ErrorCode.CORRUPT, error.getMessage());
        }
        if (error instanceof BlockNotFoundException) {
            return new RelayException(ErrorCode.NOT_FOUND, error.getMessage());
        }
        return new RelayException(ErrorCode.UPSTREAM_FAILED,
                "block " + key + ": hop " + source + " failed for " + at + ": " + error.getMessage());
    }
}
