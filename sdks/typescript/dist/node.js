// One node execution with its gates: before (inject skips the body), error (retry re-runs it,
// inject swallows the error, continue rethrows), after (step mode or an `after` breakpoint).
import { performance } from 'node:perf_hooks';
import { scopes } from './context.js';
import { isAbortError, toErrorInfo } from './errors.js';
import { CONTINUE } from './gates.js';
import { nextId } from './ids.js';
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
class Execution {
    session;
    run;
    nodeId;
    instanceId;
    heldMs = 0;
    recorded = {};
    constructor(session, run, nodeId, instanceId) {
        this.session = session;
        this.run = run;
        this.nodeId = nodeId;
        this.instanceId = instanceId;
    }
    get runId() {
        return this.run.runId;
    }
    get signal() {
        return this.run.signal;
    }
    usage(usage) {
        this.recorded.usage = usage;
    }
    finishReason(reason) {
        this.recorded.finishReason = reason;
    }
    token(text, channel = 'text') {
        this.session.token(this.run.runId, this.nodeId, this.instanceId, channel, text);
    }
}
/** The `node.started` payload: the spec's extra fields first, then the node's (the wire order of the first version). */
function startedPayload(spec, nodeId, instanceId, parentId) {
    const payload = {};
    if (spec.started !== undefined)
        for (const key in spec.started)
            payload[key] = spec.started[key];
    payload.nodeId = nodeId;
    payload.kind = spec.kind;
    payload.name = spec.name;
    payload.instanceId = instanceId;
    if (parentId !== undefined && parentId !== nodeId)
        payload.parentId = parentId;
    if (spec.input !== undefined)
        payload.input = spec.input;
    return payload;
}
/** Runs `body` as one execution of a node, with its gates and lifecycle events. */
export async function executeNode(session, spec, body, adapter = {}) {
    const scope = scopes.getStore();
    const run = scope?.run ?? session.implicitRun();
    const node = { nodeId: spec.nodeId ?? `${spec.kind}:${spec.name}`, kind: spec.kind, name: spec.name };
    const exec = new Execution(session, run, node.nodeId, spec.instanceId ?? nextId('call'));
    const started = performance.now();
    const parentId = scope?.parentId;
    session.emitTo(run.runId, 'node.started', startedPayload(spec, node.nodeId, exec.instanceId, parentId));
    let input = spec.input;
    // Only a gate that holds builds its options and is awaited: the common pass costs one check.
    const hold = (point) => session.gate(point, node, { runId: run.runId, input, editable: spec.editable, signal: run.signal, onHeld: (ms) => (exec.heldMs += ms) });
    // `shared`: the output is also handed to the host (an injected value), which may change it.
    const finish = (status, output, extra, shared = false) => {
        session.flushTokens();
        // Assignments, not object spreads: this runs twice per loop step (see bench/step.mjs).
        const payload = {};
        for (const key in exec.recorded)
            payload[key] = exec.recorded[key];
        if (extra !== undefined)
            for (const key in extra)
                payload[key] = extra[key];
        payload.nodeId = node.nodeId;
        payload.instanceId = exec.instanceId;
        payload.durationMs = performance.now() - started;
        payload.status = status;
        if (output !== undefined)
            payload.output = output;
        if (exec.heldMs > 0)
            payload.heldMs = exec.heldMs;
        if (adapter.ownsOutput === true && !shared)
            session.emitOwned(run.runId, 'node.finished', payload);
        else
            session.emitTo(run.runId, 'node.finished', payload);
    };
    const aborted = () => {
        run.abort();
        finish('aborted', undefined);
        return run.abortReason();
    };
    const injected = (decision, extra) => {
        finish('ok', decision.output, { injected: true, ...extra }, true);
        return adapter.fromInjected ? adapter.fromInjected(decision.output) : decision.output;
    };
    for (;;) {
        const before = session.holds('before', node) ? await hold('before') : CONTINUE;
        if (before.action === 'abort')
            throw aborted();
        if (before.action === 'inject')
            return injected(before, {});
        if (before.edited)
            input = before.input;
        let result;
        try {
            result = await scopes.run({ run, parentId: node.nodeId }, () => body(input, exec));
        }
        catch (error) {
            if (isAbortError(error)) {
                finish('aborted', undefined);
                throw error;
            }
            session.emitOwned(run.runId, 'node.error', { nodeId: node.nodeId, instanceId: exec.instanceId, error: toErrorInfo(error) });
            const decision = session.holds('error', node) ? await hold('error') : CONTINUE;
            if (decision.action === 'retry')
                continue;
            if (decision.action === 'inject')
                return injected(decision, { recoveredFromError: true });
            if (decision.action === 'abort')
                throw aborted();
            finish('error', undefined);
            throw error;
        }
        if (adapter.afterGate !== false) {
            const after = session.holds('after', node) ? await hold('after') : CONTINUE;
            if (after.action === 'retry')
                continue;
            if (after.action === 'inject')
                return injected(after, {});
            if (after.action === 'abort')
                throw aborted();
        }
        if (adapter.streaming) {
            let ended = false;
            const end = (status, output, extra, error) => {
                if (ended)
                    return;
                ended = true;
                if (status === 'error') {
                    session.emitOwned(run.runId, 'node.error', { nodeId: node.nodeId, instanceId: exec.instanceId, error: toErrorInfo(error) });
                }
                finish(status, output, extra);
            };
            return adapter.streaming(result, end);
        }
        finish('ok', guarded(adapter.outputOf, result, result), guarded(adapter.finishedOf, result, undefined));
        return result;
    }
}
