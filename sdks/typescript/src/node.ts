// One node execution with its gates: before (inject skips the body), error (retry re-runs it,
// inject swallows the error, continue rethrows), after (step mode or an `after` breakpoint).
import { performance } from 'node:perf_hooks';
import { type RunContext, type Scope, scopes } from './context.js';
import { isAbortError, toErrorInfo } from './errors.js';
import { CONTINUE, type Decision, type GateNode } from './gates.js';
import { nextId } from './ids.js';
import type { FrameWarn } from './frame.js';
import { snapshot, snapshotFields } from './snapshot.js';
import type { NodeKind, PausePoint, TokenChannel } from './protocol.js';
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

function guarded<A, R>(fn: ((a: A) => R) | undefined, a: A, fallback: R): R {
  if (!fn) return fallback;
  try {
    return fn(a);
  } catch {
    return fallback;
  }
}

/**
 * One execution of a node: what its body may report (`NodeContext`), the node its gates
 * belong to (`GateNode`), and its lifecycle events. Methods, not closures: an execution runs
 * twice per step of a tool loop and should allocate little.
 */
class Execution<T> implements NodeContext, GateNode {
  heldMs = 0;
  recorded: Record<string, unknown> | undefined;
  readonly nodeId: string;
  readonly kind: NodeKind;
  readonly name: string;
  readonly instanceId: string;
  readonly started = performance.now();
  input: unknown;
  constructor(
    private readonly session: Session,
    readonly run: RunContext,
    private readonly spec: NodeSpec,
    private readonly adapter: NodeAdapter<T>,
  ) {
    this.nodeId = spec.nodeId ?? `${spec.kind}:${spec.name}`;
    this.kind = spec.kind;
    this.name = spec.name;
    this.instanceId = spec.instanceId ?? nextId('call');
    this.input = spec.input;
  }
  get runId(): string {
    return this.run.runId;
  }
  get signal(): AbortSignal {
    return this.run.signal;
  }
  usage(usage: Usage): void {
    (this.recorded ??= {}).usage = usage;
  }
  finishReason(reason: string): void {
    (this.recorded ??= {}).finishReason = reason;
  }
  token(text: string, channel: TokenChannel = 'text'): void {
    this.session.token(this.run.runId, this.nodeId, this.instanceId, channel, text);
  }

  /** Holds at `point` (only called when `session.holds` said it would). */
  hold(point: PausePoint): Promise<Decision> {
    return this.session.gate(point, this, {
      runId: this.run.runId,
      input: this.input,
      editable: this.spec.editable,
      signal: this.run.signal,
      onHeld: (ms) => (this.heldMs += ms),
    });
  }

  /** `node.finished`. `shared`: the output is also handed to the host (an injected value), which may change it. */
  finish(status: 'ok' | 'error' | 'aborted', output: unknown, extra?: Record<string, unknown>, shared = false): void {
    const session = this.session;
    session.flushTokens();
    // Assignments, not object spreads: this runs twice per loop step.
    // The host's values (its output, what its body recorded) are snapshotted now; the rest is
    // the SDK's and is serialised when the event is first sent.
    const owned = this.adapter.ownsOutput === true && !shared;
    const payload: Record<string, unknown> = {};
    const recorded = this.recorded;
    const warn = session.warnFrame;
    if (recorded !== undefined) snapshotFields(recorded, payload, warn);
    if (extra !== undefined) {
      if (owned) for (const key in extra) payload[key] = extra[key];
      else snapshotFields(extra, payload, warn);
    }
    payload.nodeId = this.nodeId;
    payload.instanceId = this.instanceId;
    payload.durationMs = performance.now() - this.started;
    payload.status = status;
    if (output !== undefined) payload.output = owned ? output : snapshot(output, warn);
    if (this.heldMs > 0) payload.heldMs = this.heldMs;
    session.emitOwned(this.run.runId, 'node.finished', payload);
  }

  /** `node.error` of the body's error. */
  failed(error: unknown): void {
    this.session.emitOwned(this.run.runId, 'node.error', { nodeId: this.nodeId, instanceId: this.instanceId, error: toErrorInfo(error) });
  }

  /** Aborts the run at a gate; returns the error to throw. */
  aborted(): unknown {
    this.run.abort();
    this.finish('aborted', undefined);
    return this.run.abortReason();
  }

  /** The viewer's value answers the node. */
  injected(decision: Decision, extra: Record<string, unknown>): T {
    this.finish('ok', decision.output, { injected: true, ...extra }, true);
    return this.adapter.fromInjected ? this.adapter.fromInjected(decision.output) : (decision.output as T);
  }
}

/** The `node.started` payload: the spec's extra fields first, then the node's (the wire order of the first version). */
function startedPayload(spec: NodeSpec, exec: Execution<unknown>, parentId: string | undefined, warn: FrameWarn): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  if (spec.started !== undefined) snapshotFields(spec.started, payload, warn);
  payload.nodeId = exec.nodeId;
  payload.kind = spec.kind;
  payload.name = spec.name;
  payload.instanceId = exec.instanceId;
  if (parentId !== undefined && parentId !== exec.nodeId) payload.parentId = parentId;
  if (spec.input !== undefined) payload.input = spec.inputSnapshot ?? snapshot(spec.input, warn);
  return payload;
}

/** What the body's first attempt came to, when it ran before the held path took over. */
type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs `body` as one execution of a node, with its gates and lifecycle events. Not `async`:
 * when no gate holds (the common case) the body runs at once and its promise gets one
 * `then` — an async function and its `await` would make two promises more per node, and on
 * Node 20 every promise pays for the `AsyncLocalStorage` hooks. Anything that holds, fails or
 * retries goes on in `executeHeld`.
 */
export function executeNode<T>(
  session: Session,
  spec: NodeSpec,
  body: (input: unknown, ctx: NodeContext) => T | PromiseLike<T>,
  adapter: NodeAdapter<T> = {},
): Promise<T> {
  return executeNodeIn(session, scopes.getStore(), spec, body, adapter);
}

/** `executeNode` in `scope`, the caller's `scopes.getStore()` (each look-up costs Node 20 a walk to the current resource). @internal */
export function executeNodeIn<T>(session: Session, scope: Scope | undefined, spec: NodeSpec, body: Body<T>, adapter: NodeAdapter<T> = {}): Promise<T> {
  try {
    const run = scope?.run ?? session.implicitRun();
    const exec = new Execution<T>(session, run, spec, adapter);
    session.emitOwned(run.runId, 'node.started', startedPayload(spec, exec as Execution<unknown>, scope?.parentId, session.warnFrame));
    // Only a gate that holds builds its options and is awaited: the common pass costs one check.
    const inner: Scope = { run, parentId: exec.nodeId };
    if (session.holds('before', exec)) return executeHeld(session, exec, body, adapter, inner, undefined);
    let value: T | PromiseLike<T>;
    try {
      value = scopes.run(inner, body, exec.input, exec);
    } catch (error) {
      return executeHeld(session, exec, body, adapter, inner, { ok: false, error });
    }
    if (isThenable(value)) {
      return Promise.resolve(value).then(
        (result) => completed(session, exec, body, adapter, inner, result),
        (error: unknown) => executeHeld(session, exec, body, adapter, inner, { ok: false, error }),
      );
    }
    return Promise.resolve(completed(session, exec, body, adapter, inner, value));
  } catch (error) {
    return Promise.reject(error);
  }
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** The body returned: the after gate if it holds, else the node ends (or streams on). */
function completed<T>(session: Session, exec: Execution<T>, body: Body<T>, adapter: NodeAdapter<T>, inner: Scope, result: T): T | Promise<T> {
  if (adapter.afterGate !== false && session.holds('after', exec)) return executeHeld(session, exec, body, adapter, inner, { ok: true, value: result });
  return settled(exec, adapter, result);
}

/** The node's value handed on: a stream observed to its end, or `node.finished` now. */
function settled<T>(exec: Execution<T>, adapter: NodeAdapter<T>, result: T): T {
  if (adapter.streaming) {
    let ended = false;
    const end: StreamEnd = (status, output, extra, error) => {
      if (ended) return;
      ended = true;
      if (status === 'error') exec.failed(error);
      exec.finish(status, output, extra);
    };
    return adapter.streaming(result, end);
  }
  exec.finish('ok', guarded(adapter.outputOf, result, result as unknown), guarded(adapter.finishedOf, result, undefined));
  return result;
}

type Body<T> = (input: unknown, ctx: NodeContext) => T | PromiseLike<T>;

/**
 * The gated path: holds at `before`, runs the body (again, on retry), holds at `error` and
 * `after`. `first`: the outcome of an attempt `executeNode` already made (then the before
 * gate of that attempt is behind it).
 */
async function executeHeld<T>(session: Session, exec: Execution<T>, body: Body<T>, adapter: NodeAdapter<T>, inner: Scope, first: Outcome<T> | undefined): Promise<T> {
  let pending = first;
  for (;;) {
    let outcome: Outcome<T>;
    if (pending !== undefined) {
      outcome = pending;
      pending = undefined;
    } else {
      const before = session.holds('before', exec) ? await exec.hold('before') : CONTINUE;
      if (before.action === 'abort') throw exec.aborted();
      if (before.action === 'inject') return exec.injected(before, {});
      if (before.edited) exec.input = before.input;
      try {
        outcome = { ok: true, value: await scopes.run(inner, body, exec.input, exec) };
      } catch (error) {
        outcome = { ok: false, error };
      }
    }
    if (!outcome.ok) {
      const error = outcome.error;
      if (isAbortError(error)) {
        exec.finish('aborted', undefined);
        throw error;
      }
      exec.failed(error);
      const decision = session.holds('error', exec) ? await exec.hold('error') : CONTINUE;
      if (decision.action === 'retry') continue;
      if (decision.action === 'inject') return exec.injected(decision, { recoveredFromError: true });
      if (decision.action === 'abort') throw exec.aborted();
      exec.finish('error', undefined);
      throw error;
    }
    if (adapter.afterGate !== false) {
      const after = session.holds('after', exec) ? await exec.hold('after') : CONTINUE;
      if (after.action === 'retry') continue;
      if (after.action === 'inject') return exec.injected(after, {});
      if (after.action === 'abort') throw exec.aborted();
    }
    return settled(exec, adapter, outcome.value);
  }
}
