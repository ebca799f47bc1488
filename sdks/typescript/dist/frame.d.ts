/** Reports a payload cut to the budget, or one that could not be serialised. */
export type FrameWarn = (kind: string, message: string, error?: unknown) => void;
/** One event of the ring buffer: its text, or the SDK's own payload still to serialise. */
export type Frame = string | EventFrame;
/** The text of a frame, or `null` when it could not be serialised. */
export declare function frameText(frame: Frame): string | null;
/**
 * The text of an event serialised now (its payload holds values the host may change after the
 * emit): one `JSON.stringify` of the envelope, a flat string, its payload held to the budget.
 * Throws only for a payload that cannot be written at all.
 */
export declare function eagerFrame(seq: number, runId: string, type: string, payload: unknown, warn: FrameWarn): string;
/** An event whose payload the SDK built and never changes: serialised on first use. */
export declare class EventFrame {
    #private;
    /** The envelope's `seq`. */
    readonly seq: number;
    /** The envelope's `runId`. */
    readonly runId: string;
    /** The envelope's `type`. */
    readonly type: string;
    private readonly warn;
    /** The envelope's `ts` (ms since the epoch, taken at emit). */
    readonly ts: number;
    constructor(
    /** The envelope's `seq`. */
    seq: number, 
    /** The envelope's `runId`. */
    runId: string, 
    /** The envelope's `type`. */
    type: string, payload: unknown, warn: FrameWarn);
    /** The frame's text, or `null` when it could not be serialised (warned once per kind). */
    text(): string | null;
}
