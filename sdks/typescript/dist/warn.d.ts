/** Where warnings go (default `console.warn`). */
export type WarnSink = (message: string) => void;
/** Rate-limited warnings; never throws. */
export declare class Warner {
    #private;
    private readonly intervalMs;
    private readonly sink;
    constructor(intervalMs: number, sink: WarnSink);
    /** Warns about `key` unless it was warned about within the interval. */
    warn(key: string, message: string, error?: unknown): void;
}
