// Mindgate's TypeScript SDK: runs, nodes and gates for Node agents (GraphMind wire protocol v1).
import { performance } from 'node:perf_hooks';
import { currentRun, RunContext, scopes } from './context.js';
import { isAbortError } from './errors.js';
import { newId } from './ids.js';
import { executeNode, type NodeContext, type NodeSpec } from './node.js';
import type { NodeKind } from './protocol.js';
import { Session, type SessionOptions } from './session.js';

export { RunContext, currentRun } from './context.js';
export { MindgateAbortError, isAbortError } from './errors.js';
export { executeNode, type NodeAdapter, type NodeContext, type NodeSpec, type StreamEnd, type Usage } from './node.js';
export { Session, type SessionOptions, type SessionStats, type HoldOptions } from './session.js';
export { DEFAULT_URL } from './env.js';
export { VERSION } from './version.js';
export type * from './protocol.generated.js';

let current: Session | null = null;

/**
 * Configures the process's session (call it once, early; a second call replaces the first,
 * which is disposed). Returns it.
 */
export function configure(options: SessionOptions = {}): Session {
  const previous = current;
  current = new Session(options);
  if (previous) void previous.dispose(0);
  return current;
}

/** The process's session (created from the environment on first use). */
export function session(): Session {
  if (current === null) current = new Session();
  return current;
}

/** Waits until attached to the viewer (`true`), or `timeoutMs` passed / disabled (`false`). */
export function ready(timeoutMs = 2000): Promise<boolean> {
  return session().ready(timeoutMs);
}

/** Releases held gates, flushes and closes the socket (call before the process exits). */
export function dispose(timeoutMs = 1000): Promise<void> {
  return current ? current.dispose(timeoutMs) : Promise.resolve();
}

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
export async function run<T>(name: string, fn: (ctx: RunContext) => T | Promise<T>, options: RunOptions = {}): Promise<T> {
  const s = options.session ?? session();
  const ctx = new RunContext(newId('run'), name);
  const scope = { run: ctx, parentId: `agent:${name}` };
  if (!s.live) return scopes.run(scope, () => fn(ctx));
  s.startRun(ctx, options.meta, options.input);
  const started = performance.now();
  let result: T;
  try {
    result = await scopes.run(scope, () => fn(ctx));
  } catch (error) {
    const status = ctx.aborted || isAbortError(error) ? 'aborted' : 'error';
    s.finishRun(ctx, status, performance.now() - started, undefined, error);
    throw error;
  }
  s.finishRun(ctx, ctx.aborted ? 'aborted' : 'ok', performance.now() - started, jsonish(result), undefined);
  return result;
}

function jsonish(value: unknown): unknown {
  const t = typeof value;
  if (value === null || t === 'string' || t === 'number' || t === 'boolean') return value;
  if (t === 'object' && (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype)) return value;
  return undefined;
}

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
export function tool<A extends unknown[], R>(name: string, fn: (...args: A) => R | Promise<R>, options: NodeOptions = {}): (...args: A) => Promise<R> {
  const initial = options.session ?? session();
  if (!initial.enabled) {
    // Identity for an async function; a sync one only gains the promise the type promises.
    return fn.constructor?.name === 'AsyncFunction' ? (fn as (...args: A) => Promise<R>) : async (...args: A) => fn(...args);
  }
  const kind = options.kind ?? 'tool';
  return (...args: A): Promise<R> => {
    const s = options.session ?? session();
    if (!s.live) return Promise.resolve(fn(...args));
    const single = args.length === 1;
    const spec: NodeSpec = { kind, name, nodeId: options.nodeId, input: single ? args[0] : args, editable: true };
    return executeNode<R>(s, spec, (input) => fn(...((single ? [input] : input) as A)));
  };
}

/**
 * Runs `fn` now as one execution of a node (default kind `custom`), with the same gates as a
 * tool; nodes started inside it are its children.
 */
export function span<T>(name: string, fn: (ctx: NodeContext) => T | Promise<T>, options: NodeOptions & { input?: unknown } = {}): Promise<T> {
  const s = options.session ?? session();
  const kind = options.kind ?? 'custom';
  if (!s.live) {
    const run = currentRun() ?? new RunContext('detached', name);
    const ctx: NodeContext = { runId: run.runId, nodeId: `${kind}:${name}`, instanceId: '', signal: run.signal, usage() {}, finishReason() {}, token() {} };
    return Promise.resolve().then(() => fn(ctx));
  }
  return executeNode<T>(s, { kind, name, nodeId: options.nodeId, input: options.input }, (_input, ctx) => fn(ctx));
}

/** Emits one raw event into the current run (or the implicit run). */
export function emit(type: string, payload: Record<string, unknown>): void {
  session().emit(type, payload);
}
