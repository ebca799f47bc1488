import type { NodeKind, TokenChannel } from './protocol.js';
import type { Session } from './session.js';
/** Token counts of one execution (wire `usage`). */
export interface Usage {
    inputTokens: number;
    outputTokens: number;
    cacheReadTokens?: number;
    cacheWriteTokens?: number;
    reasoningTokens?: number;
}
/** What a node's body may report while it runs. */
export interface NodeContext {
    /** The run's id. */
    readonly runId: string;
    /** The logical node (`tool:search`). */
    readonly nodeId: string;
    /** This execution. */
    readonly instanceId: string;
    /** The run's abort signal: pass it to your I/O. */
    readonly signal: AbortSignal;
    /** Records token usage (shown on the node, summed in the run's cost). */
    usage(usage: Usage): void;
    /** Records why a model call stopped (`stop`, `length`, `tool-calls`, …). */
    finishReason(reason: string): void;
    /** Streams text to the node's box (batched as `node.token`). */
    token(text: string, channel?: TokenChannel): void;
}
/** One node to execute. */
export interface NodeSpec {
    kind: NodeKind;
    name: string;
    /** Default `<kind>:<name>`. */
    nodeId?: string;
    /** Default a fresh `call_…` id. */
    instanceId?: string;
    input?: unknown;
    /** The before gate takes an edited input (then the body receives it). */
    editable?: boolean;
    /** Extra top-level `node.started` fields (e.g. `model`). */
    started?: Record<string, unknown>;
    /** `input` as `node.started` shows it, when the caller snapshotted it itself (`snapshot.ts`); default `snapshot(input)`. */
    inputSnapshot?: unknown;
}
/** How a node's value is shown and how an injected value becomes one. */
export interface NodeAdapter<T> {
    /** The value the body would have returned, made from the viewer's injected JSON. */
    fromInjected?: (value: unknown) => T;
    /** The `output` shown for a result (default the result). */
    outputOf?: (result: T) => unknown;
    /** Extra `node.finished` fields for a result (usage, finishReason, model). */
    finishedOf?: (result: T) => Record<string, unknown> | undefined;
    /**
     * `outputOf`, `finishedOf`, `streaming` and `fromInjected` build the output and extra fields
     * afresh (never hand on the host's objects): `node.finished` is then serialised when first
     * sent, not at emit (default false).
     */
    ownsOutput?: boolean;
    /** Hold at `after` (default true; a stream has no single value to hold). */
    afterGate?: boolean;
    /**
     * A result that is still producing (a stream): the node ends when it calls `end`, not when
     * the body returns. Returns the value handed to the caller.
     */
    streaming?: (result: T, end: StreamEnd) => T;
}
/** Ends a streaming node: `ok` with its output and extra fields, or `error` with the error. */
export type StreamEnd = (status: 'ok' | 'error', output: unknown, extra?: Record<string, unknown>, error?: unknown) => void;
/**
 * Runs `body` as one execution of a node, with its gates and lifecycle events. Not `async`:
 * when no gate holds (the common case) the body runs at once and its promise gets one
 * `then` — an async function and its `await` would make two promises more per node, and on
 * Node 20 every promise pays for the `AsyncLocalStorage` hooks. Anything that holds, fails or
 * retries goes on in `executeHeld`.
 */
export declare function executeNode<T>(session: Session, spec: NodeSpec, body: (input: unknown, ctx: NodeContext) => T | PromiseLike<T>, adapter?: NodeAdapter<T>): Promise<T>;
