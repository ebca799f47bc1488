/** Reports a payload cut to the budget, or one that could not be serialised. */
export type FrameWarn = (kind: string, message: string, error?: unknown) => void;
/** One event of the ring buffer. */
export declare class EventFrame {
    #private;
    /** The envelope's `seq`. */
    readonly seq: number;
    /** The envelope's `ts` (ms since the epoch, taken at emit). */
    readonly ts: number;
    /** The envelope's `runId`. */
    readonly runId: string;
    /** The envelope's `type`. */
    readonly type: string;
    private readonly warn;
    private constructor();
    /** Serialised now: the payload holds values the host may change after the emit. Throws when it cannot be serialised. */
    static eager(seq: number, runId: string, type: string, payload: unknown, warn: FrameWarn): EventFrame;
    /** Serialised on first use: the payload is the SDK's own and is never changed after the emit. */
    static owned(seq: number, runId: string, type: string, payload: unknown, warn: FrameWarn): EventFrame;
    /** The frame's text, or `null` when it could not be serialised (warned once per kind). */
    text(): string | null;
}
