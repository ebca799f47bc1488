import { RunContext } from './context.js';
import { type Env } from './env.js';
import { type Decision, type GateNode } from './gates.js';
import { type BreakpointMatcher, type PausePoint, type RunStatus, type TokenChannel } from './protocol.js';
import { type TransportTiming } from './transport.js';
import { type WarnSink } from './warn.js';
/** Session options; every one has a default. */
export interface SessionOptions {
    /** The application's name in the run list (default `node`). */
    app?: string;
    /** The viewer's ingest URL (default `$MINDGATE_URL`, `$GRAPHMIND_URL`, `ws://127.0.0.1:4747/ingest`). */
    url?: string;
    /** Sent as `Authorization: Bearer` (a server started with `--allow-remote` needs it; `?token=` in the URL works too). */
    token?: string;
    /** Force on or off (`MINDGATE_DISABLED=1` still wins). */
    enabled?: boolean;
    /** The environment to read (default `process.env`). */
    env?: Env;
    /** Frames kept for replay on attach (default 2,000, drop-oldest); also the send queue while attached. */
    bufferSize?: number;
    /**
     * Bytes the socket may hold that the kernel has not taken yet (default 1 MiB, at least
     * 64 KiB): against a slow viewer the rest waits in the ring buffer, dropped oldest first.
     */
    sendBufferBytes?: number;
    /**
     * Transport timing (ms): connect 300, handshake 1,000, reconnect 100 doubling to 5,000;
     * events written within 20 while attached (gate events at once).
     */
    timing?: Partial<TransportTiming>;
    /** How often streamed tokens are sent per node instance (default 34 ms). */
    tokenIntervalMs?: number;
    /** Where the SDK's own warnings go (default `console.warn`), at most one per kind per minute. */
    logger?: WarnSink;
    /** Metadata added to every run's `run.started.meta`. */
    meta?: Record<string, unknown>;
}
/** What a held gate needs beyond its node. */
export interface HoldOptions {
    /** The run the gate belongs to. */
    runId: string;
    /** The node's input (an edit must keep its JSON type). */
    input?: unknown;
    /** The gate accepts an edited `input` on `continue` (before gates only). */
    editable?: boolean;
    /** Called with the time held, in ms, when the gate is released. */
    onHeld?: (ms: number) => void;
    /** The run's signal: when the host aborts the run, the gate is released with `abort`. */
    signal?: AbortSignal;
}
/** Counters for tests, benchmarks and curious hosts. */
export interface SessionStats {
    enabled: boolean;
    attached: boolean;
    buffered: number;
    dropped: number;
    /** Events the ring dropped while attached before they were sent (a viewer slower than the app). */
    unsentDropped: number;
    /** Bytes written to the socket and not yet taken by the kernel. */
    socketBuffered: number;
    heldGates: number;
    seq: number;
    connectAttempts: number;
}
/** The Mindgate client session. Never throws into the host. */
export declare class Session {
    #private;
    /** Events flow and gates can hold. */
    readonly enabled: boolean;
    /** The app name every run carries. */
    readonly app: string;
    /** The ingest URL. */
    readonly url: string;
    constructor(options?: SessionOptions);
    /** Enabled and not disposed: events are recorded and gates may hold. */
    get live(): boolean;
    /** Handshake complete: breakpoints are armed. */
    get attached(): boolean;
    /** Counters. */
    stats(): SessionStats;
    /** The viewer's debug state as this session holds it (forgotten while detached). */
    armed(): {
        breakpoints: BreakpointMatcher[];
        mode: 'run' | 'step';
    };
    /** Resolves `true` once attached (breakpoints armed), `false` after `timeoutMs` or when disabled. */
    ready(timeoutMs?: number): Promise<boolean>;
    /** Emits one event into the current run (or the implicit run of stray events). */
    emit(type: string, payload: Record<string, unknown>): void;
    /**
     * Emits one event into run `runId`, serialised now: its payload may hold the host's values,
     * which may change after the emit. Never throws.
     */
    emitTo(runId: string, type: string, payload: unknown): void;
    /**
     * Emits one event whose payload the SDK built from strings and numbers and never changes
     * afterwards (token deltas, hints, gate and error events): it is serialised only when it is
     * sent or replayed, so detached it costs a ring slot. Never throws.
     */
    emitOwned(runId: string, type: string, payload: object): void;
    /** The current run's id, or the implicit run's (started on first use). */
    runIdForEvent(): string;
    /** The run that collects events emitted outside any `run()`. */
    implicitRun(): RunContext;
    /** `run.started` and the run's agent node. */
    startRun(run: RunContext, meta: Record<string, unknown> | undefined, input: unknown): void;
    /** The agent node's end and `run.finished`. */
    finishRun(run: RunContext, status: RunStatus, durationMs: number, output: unknown, error: unknown): void;
    /**
     * A gate at `point` of `node`. Detached, or attached with nothing matching, it returns one
     * shared resolved promise (no allocation); otherwise it holds until the viewer releases it
     * or the socket goes (then `continue`).
     */
    gate(point: PausePoint, node: GateNode, hold: HoldOptions): Promise<Decision>;
    /**
     * Whether a gate at `point` of `node` would hold now (a breakpoint matches or step mode):
     * `false` detached and attached with nothing matching, without allocating, so callers skip
     * building the gate's options and awaiting it. Never throws.
     */
    holds(point: PausePoint, node: GateNode): boolean;
    /** Queues streamed text of a node instance (sent batched as `node.token`). */
    token(runId: string, nodeId: string, instanceId: string, channel: TokenChannel, text: string): void;
    /** Sends every queued token batch now. */
    flushTokens(): void;
    /**
     * Releases every held gate (`continue`), finishes the implicit run, waits up to `timeoutMs`
     * for the socket to drain and closes it. Idempotent; never throws.
     */
    dispose(timeoutMs?: number): Promise<void>;
}
