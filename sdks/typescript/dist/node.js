// One node execution with its gates: before (inject skips the body), error (retry re-runs it,
// inject swallows the error, continue rethrows), after (step mode or an `after` breakpoint).
import { performance } from 'node:perf_hooks';
import { scopes } from './context.js';
import { isAbortError, toErrorInfo } from './errors.js';
import { CONTINUE } from './gates.js';
import { nextId } from './ids.js';
import { snapshot, snapshotFields } from './snapshot.js';
function guarded(fn, a, fallback) {
    if (!fn)
        return fallback;
    try {
        return fn(a);
    }
    catch {
        return fallback;
    }
}
/**
 * One execution of a node: what its body may report (`NodeContext`), the node its gates
 * belong to (`GateNode`), and its lifecycle events. Methods, not closures: an execution runs
 * twice per step of a tool loop and should allocate little.
 */
class Execution {
    session;
    run;
    spec;
    adapter;
    heldMs = 0;
    recorded;
    nodeId;
    kind;
    name;
    instanceId;
    started = performance.now();
    input;
    constructor(session, run, spec, adapter) {
        this.session = session;
        this.run = run;
        this.spec = spec;
        this.adapter = adapter;
        this.nodeId = spec.nodeId ?? `${spec.kind}:${spec.name}`;
        this.kind = spec.kind;
        this.name = spec.name;
        this.instanceId = spec.instanceId ?? nextId('call');
        this.input = spec.input;
    }
    get runId() {
        return this.run.runId;
    }
    get signal() {
        return this.run.signal;
    }
    usage(usage) {
        (this.recorded ??= {}).usage = usage;
    }
    finishReason(reason) {
        (this.recorded ??= {}).finishReason = reason;
    }
    token(text, channel = 'text') {
        this.session.token(this.run.runId, this.nodeId, this.instanceId, channel, text);
    }
    /** Holds at `point` (only called when `session.holds` said it would). */
    hold(point) {
        return this.session.gate(point, this, {
            runId: this.run.runId,
            input: this.input,
            editable: this.spec.editable,
            signal: this.run.signal,
            onHeld: (ms) => (this.heldMs += ms),
        });
    }
    /** `node.finished`. `shared`: the output is also handed to the host (an injected value), which may change it. */
    finish(status, output, extra, shared = false) {
        const session = this.session;
        session.flushTokens();
        // Assignments, not object spreads: this runs twice per loop step.
        // The host's values (its output, what its body recorded) are snapshotted now; the rest is
        // the SDK's and is serialised when the event is first sent.
        const owned = this.adapter.ownsOutput === true && !shared;
        const payload = {};
        const recorded = this.recorded;
        const warn = session.warnFrame;
        if (recorded !== undefined)
            snapshotFields(recorded, payload, warn);
        if (extra !== undefined) {
            if (owned)
                for (const key in extra)
                    payload[key] = extra[key];
            else
                snapshotFields(extra, payload, warn);
        }
        payload.nodeId = this.nodeId;
        payload.instanceId = this.instanceId;
        payload.durationMs = performance.now() - this.started;
        payload.status = status;
        if (output !== undefined)
            payload.output = owned ? output : snapshot(output, warn);
        if (this.heldMs > 0)
            payload.heldMs = this.heldMs;
        session.emitOwned(this.run.runId, 'node.finished', payload);
    }
    /** `node.error` of the body's error. */
    failed(error) {
        this.session.emitOwned(this.run.runId, 'node.error', { nodeId: this.nodeId, instanceId: this.instanceId, error: toErrorInfo(error) });
    }
    /** Aborts the run at a gate; returns the error to throw. */
    aborted() {
        this.run.abort();
        this.finish('aborted', undefined);
        return this.run.abortReason();
    }
    /** The viewer's value answers the node. */
    injected(decision, extra) {
        this.finish('ok', decision.output, { injected: true, ...extra }, true);
        return this.adapter.fromInjected ? this.adapter.fromInjected(decision.output) : decision.output;
    }
}
/** The `node.started` payload: the spec's extra fields first, then the node's (the wire order of the first version). */
function startedPayload(spec, exec, parentId, warn) {
    const payload = {};
    if (spec.started !== undefined)
        snapshotFields(spec.started, payload, warn);
    payload.nodeId = exec.nodeId;
    payload.kind = spec.kind;
    payload.name = spec.name;
    payload.instanceId = exec.instanceId;
    if (parentId !== undefined && parentId !== exec.nodeId)
        payload.parentId = parentId;
    if (spec.input !== undefined)
        payload.input = spec.inputSnapshot ?? snapshot(spec.input, warn);
    return payload;
}
/**
 * Runs `body` as one execution of a node, with its gates and lifecycle events. Not `async`:
 * when no gate holds (the common case) the body runs at once and its promise gets one
 * `then` — an async function and its `await` would make two promises more per node, and on
 * Node 20 every promise pays for the `AsyncLocalStorage` hooks. Anything that holds, fails or
 * retries goes on in `executeHeld`.
 */
export function executeNode(session, spec, body, adapter = {}) {
    return executeNodeIn(session, scopes.getStore(), spec, body, adapter);
}
/** `executeNode` in `scope`, the caller's `scopes.getStore()` (each look-up costs Node 20 a walk to the current resource). @internal */
export function executeNodeIn(session, scope, spec, body, adapter = {}) {
    try {
        const run = scope?.run ?? session.implicitRun();
        const exec = new Execution(session, run, spec, adapter);
        session.emitOwned(run.runId, 'node.started', startedPayload(spec, exec, scope?.parentId, session.warnFrame));
        // Only a gate that holds builds its options and is awaited: the common pass costs one check.
        const inner = { run, parentId: exec.nodeId };
        if (session.holds('before', exec))
            return executeHeld(session, exec, body, adapter, inner, undefined);
        let value;
        try {
            value = scopes.run(inner, body, exec.input, exec);
        }
        catch (error) {
            return executeHeld(session, exec, body, adapter, inner, { ok: false, error });
        }
        if (isThenable(value)) {
            return Promise.resolve(value).then((result) => completed(session, exec, body, adapter, inner, result), (error) => executeHeld(session, exec, body, adapter, inner, { ok: false, error }));
        }
        return Promise.resolve(completed(session, exec, body, adapter, inner, value));
    }
    catch (error) {
        return Promise.reject(error);
    }
}
function isThenable(value) {
    return typeof value?.then === 'function';
}
/** The body returned: the after gate if it holds, else the node ends (or streams on). */
function completed(session, exec, body, adapter, inner, result) {
    if (adapter.afterGate !== false && session.holds('after', exec))
        return executeHeld(session, exec, body, adapter, inner, { ok: true, value: result });
    return settled(exec, adapter, result);
}
/** The node's value handed on: a stream observed to its end, or `node.finished` now. */
function settled(exec, adapter, result) {
    if (adapter.streaming) {
        let ended = false;
        const end = (status, output, extra, error) => {
            if (ended)
                return;
            ended = true;
            if (status === 'error')
                exec.failed(error);
            exec.finish(status, output, extra);
        };
        return adapter.streaming(result, end);
    }
    exec.finish('ok', guarded(adapter.outputOf, result, result), guarded(adapter.finishedOf, result, undefined));
    return result;
}
/**
 * The gated path: holds at `before`, runs the body (again, on retry), holds at `error` and
 * `after`. `first`: the outcome of an attempt `executeNode` already made (then the before
 * gate of that attempt is behind it).
 */
async function executeHeld(session, exec, body, adapter, inner, first) {
    let pending = first;
    for (;;) {
        let outcome;
        if (pending !== undefined) {
            outcome = pending;
            pending = undefined;
        }
        else {
            const before = session.holds('before', exec) ? await exec.hold('before') : CONTINUE;
            if (before.action === 'abort')
                throw exec.aborted();
            if (before.action === 'inject')
                return exec.injected(before, {});
            if (before.edited)
                exec.input = before.input;
            try {
                outcome = { ok: true, value: await scopes.run(inner, body, exec.input, exec) };
            }
            catch (error) {
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
            if (decision.action === 'retry')
                continue;
            if (decision.action === 'inject')
                return exec.injected(decision, { recoveredFromError: true });
            if (decision.action === 'abort')
                throw exec.aborted();
            exec.finish('error', undefined);
            throw error;
        }
        if (adapter.afterGate !== false) {
            const after = session.holds('after', exec) ? await exec.hold('after') : CONTINUE;
            if (after.action === 'retry')
                continue;
            if (after.action === 'inject')
                return exec.injected(after, {});
            if (after.action === 'abort')
                throw exec.aborted();
        }
        return settled(exec, adapter, outcome.value);
    }
}
