// One warning per key per interval: the SDK's only voice when it degrades.
/** Rate-limited warnings; never throws. */
export class Warner {
    intervalMs;
    sink;
    #last = new Map();
    constructor(intervalMs, sink) {
        this.intervalMs = intervalMs;
        this.sink = sink;
    }
    /** Warns about `key` unless it was warned about within the interval. */
    warn(key, message, error) {
        try {
            const now = Date.now();
            const last = this.#last.get(key);
            if (last !== undefined && now - last < this.intervalMs)
                return;
            this.#last.set(key, now);
            const detail = error instanceof Error ? `: ${error.message}` : '';
            this.sink(`[mindgate] ${message}${detail}`);
        }
        catch {
            // A broken sink must not break the host.
        }
    }
}
