import { RunContext } from './context.js';
import { type NodeContext } from './node.js';
import type { NodeKind } from './protocol.js';
import { Session, type SessionOptions } from './session.js';
export { RunContext, currentRun } from './context.js';
export { MindgateAbortError, isAbortError } from './errors.js';
export { executeNode, type NodeAdapter, type NodeContext, type NodeSpec, type StreamEnd, type Usage } from './node.js';
export { Session, type SessionOptions, type SessionStats, type HoldOptions } from './session.js';
export { DEFAULT_URL } from './env.js';
export { VERSION } from './version.js';
export type * from './protocol.generated.js';
/**
 * Configures the process's session (call it once, early; a second call replaces the first,
 * which is disposed). Returns it.
 */
export declare function configure(options?: SessionOptions): Session;
/** The process's session (created from the environment on first use). */
export declare function session(): Session;
/** Waits until attached to the viewer (`true`), or `timeoutMs` passed / disabled (`false`). */
export declare function ready(timeoutMs?: number): Promise<boolean>;
/** Releases held gates, flushes and closes the socket (call before the process exits). */
export declare function dispose(timeoutMs?: number): Promise<void>;
/** Options of `run`. */
export interface RunOptions {
    /** Added to `run.started.meta`. */
    meta?: Record<string, unknown>;
    /** Shown as the agent node's input. */
    input?: unknown;
    /** Another session than the process's. */
    session?: Session;
}
/**
 * Runs `fn` as one named run: every event inside it, however many awaits deep, belongs to
 * the run (AsyncLocalStorage). `fn` receives the run's context: pass `ctx.signal` to
 * `generateText({ abortSignal })` and your own I/O so the debugger's abort reaches them.
 * Disabled, it still calls `fn` with a working context. Errors of `fn` propagate untouched.
 */
export declare function run<T>(name: string, fn: (ctx: RunContext) => T | Promise<T>, options?: RunOptions): Promise<T>;
/** Options of `tool` and `span`. */
export interface NodeOptions {
    /** Node kind (default `tool` for `tool`, `custom` for `span`). */
    kind?: NodeKind;
    /** Logical node id (default `<kind>:<name>`). */
    nodeId?: string;
    /** Another session than the process's. */
    session?: Session;
}
/**
 * Wraps a function as a tool node `tool:<name>`: a before gate (inject returns the viewer's
 * value without calling it; continue may carry an edited argument), an error gate (retry
 * re-runs it, inject returns a value instead of the error) and an after gate. The input shown
 * is the first argument (all of them when there are several). Disabled: returns `fn` itself
 * (a sync `fn` in an async pass-through).
 */
export declare function tool<A extends unknown[], R>(name: string, fn: (...args: A) => R | Promise<R>, options?: NodeOptions): (...args: A) => Promise<R>;
/**
 * Runs `fn` now as one execution of a node (default kind `custom`), with the same gates as a
 * tool; nodes started inside it are its children.
 */
export declare function span<T>(name: string, fn: (ctx: NodeContext) => T | Promise<T>, options?: NodeOptions & {
    input?: unknown;
}): Promise<T>;
/** Emits one raw event into the current run (or the implicit run). */
export declare function emit(type: string, payload: Record<string, unknown>): void;
