// One node execution with its gates: before (inject skips the body), error (retry re-runs it,
// inject swallows the error, continue rethrows), after (step mode or an `after` breakpoint).
import { performance } from 'node:perf_hooks';
import { type RunContext, scopes } from './context.js';
import { isAbortError, toErrorInfo } from './errors.js';
import { CONTINUE, type Decision, type GateNode } from './gates.js';
import { nextId } from './ids.js';
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

class Execution implements NodeContext {
  heldMs = 0;
  recorded: Record<string, unknown> = {};
  constructor(
    private readonly session: Session,
    readonly run: RunContext,
    readonly nodeId: string,
    readonly instanceId: string,
  ) {}
  get runId(): string {
    return this.run.runId;
  }
  get signal(): AbortSignal {
    return this.run.signal;
  }
  usage(usage: Usage): void {
    this.recorded.usage = usage;
  }
  finishReason(reason: string): void {
    this.recorded.finishReason = reason;
  }
  token(text: string, channel: TokenChannel = 'text'): void {
    this.session.token(this.run.runId, this.nodeId, this.instanceId, channel, text);
  }
}

/** The `node.started` payload: the spec's extra fields first, then the node's (the wire order of the first version). */
function startedPayload(spec: NodeSpec, nodeId: string, instanceId: string, parentId: string | undefined): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  if (spec.started !== undefined) for (const key in spec.started) payload[key] = spec.started[key];
  payload.nodeId = nodeId;
  payload.kind = spec.kind;
  payload.name = spec.name;
  payload.instanceId = instanceId;
  if (parentId !== undefined && parentId !== nodeId) payload.parentId = parentId;
  if (spec.input !== undefined) payload.input = spec.input;
  return payload;
}

/** Runs `body` as one execution of a node, with its gates and lifecycle events. */
export async function executeNode<T>(
  session: Session,
  spec: NodeSpec,
  body: (input: unknown, ctx: NodeContext) => T | Promise<T>,
  adapter: NodeAdapter<T> = {},
): Promise<T> {
  const scope = scopes.getStore();
  const run = scope?.run ?? session.implicitRun();
  const node: GateNode = { nodeId: spec.nodeId ?? `${spec.kind}:${spec.name}`, kind: spec.kind, name: spec.name };
  const exec = new Execution(session, run, node.nodeId, spec.instanceId ?? nextId('call'));
  const started = performance.now();
  const parentId = scope?.parentId;
  session.emitTo(run.runId, 'node.started', startedPayload(spec, node.nodeId, exec.instanceId, parentId));
  let input = spec.input;
  // Only a gate that holds builds its options and is awaited: the common pass costs one check.
  const hold = (point: PausePoint): Promise<Decision> =>
    session.gate(point, node, { runId: run.runId, input, editable: spec.editable, signal: run.signal, onHeld: (ms) => (exec.heldMs += ms) });
  // `shared`: the output is also handed to the host (an injected value), which may change it.
  const finish = (status: 'ok' | 'error' | 'aborted', output: unknown, extra?: Record<string, unknown>, shared = false) => {
    session.flushTokens();
    // Assignments, not object spreads: this runs twice per loop step (see bench/step.mjs).
    const payload: Record<string, unknown> = {};
    for (const key in exec.recorded) payload[key] = exec.recorded[key];
    if (extra !== undefined) for (const key in extra) payload[key] = extra[key];
    payload.nodeId = node.nodeId;
    payload.instanceId = exec.instanceId;
    payload.durationMs = performance.now() - started;
    payload.status = status;
    if (output !== undefined) payload.output = output;
    if (exec.heldMs > 0) payload.heldMs = exec.heldMs;
    if (adapter.ownsOutput === true && !shared) session.emitOwned(run.runId, 'node.finished', payload);
    else session.emitTo(run.runId, 'node.finished', payload);
  };
  const aborted = (): unknown => {
    run.abort();
    finish('aborted', undefined);
    return run.abortReason();
  };
  const injected = (decision: Decision, extra: Record<string, unknown>): T => {
    finish('ok', decision.output, { injected: true, ...extra }, true);
    return adapter.fromInjected ? adapter.fromInjected(decision.output) : (decision.output as T);
  };
  for (;;) {
    const before = session.holds('before', node) ? await hold('before') : CONTINUE;
    if (before.action === 'abort') throw aborted();
    if (before.action === 'inject') return injected(before, {});
    if (before.edited) input = before.input;
    let result: T;
    try {
      result = await scopes.run({ run, parentId: node.nodeId }, () => body(input, exec));
    } catch (error) {
      if (isAbortError(error)) {
        finish('aborted', undefined);
        throw error;
      }
      session.emitOwned(run.runId, 'node.error', { nodeId: node.nodeId, instanceId: exec.instanceId, error: toErrorInfo(error) });
      const decision = session.holds('error', node) ? await hold('error') : CONTINUE;
      if (decision.action === 'retry') continue;
      if (decision.action === 'inject') return injected(decision, { recoveredFromError: true });
      if (decision.action === 'abort') throw aborted();
      finish('error', undefined);
      throw error;
    }
    if (adapter.afterGate !== false) {
      const after = session.holds('after', node) ? await hold('after') : CONTINUE;
      if (after.action === 'retry') continue;
      if (after.action === 'inject') return injected(after, {});
      if (after.action === 'abort') throw aborted();
    }
    if (adapter.streaming) {
      let ended = false;
      const end: StreamEnd = (status, output, extra, error) => {
        if (ended) return;
        ended = true;
        if (status === 'error') {
          session.emitOwned(run.runId, 'node.error', { nodeId: node.nodeId, instanceId: exec.instanceId, error: toErrorInfo(error) });
        }
        finish(status, output, extra);
      };
      return adapter.streaming(result, end);
    }
    finish('ok', guarded(adapter.outputOf, result, result as unknown), guarded(adapter.finishedOf, result, undefined));
    return result;
  }
}
