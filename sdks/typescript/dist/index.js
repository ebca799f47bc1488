// Mindgate's TypeScript SDK: runs, nodes and gates for Node agents (GraphMind wire protocol v1).
import { performance } from 'node:perf_hooks';
import { currentRun, RunContext, scopes } from './context.js';
import { isAbortError } from './errors.js';
import { newId } from './ids.js';
import { executeNode } from './node.js';
import { Session } from './session.js';
export { RunContext, currentRun } from './context.js';
export { MindgateAbortError, isAbortError } from './errors.js';
export { executeNode } from './node.js';
export { Session } from './session.js';
export { DEFAULT_URL } from './env.js';
export { VERSION } from './version.js';
let current = null;
/**
 * Configures the process's session (call it once, early; a second call replaces the first,
 * which is disposed). Returns it.
 */
export function configure(options = {}) {
    const previous = current;
    current = new Session(options);
    if (previous)
        void previous.dispose(0);
    return current;
}
/** The process's session (created from the environment on first use). */
export function session() {
    if (current === null)
        current = new Session();
    return current;
}
/** Waits until attached to the viewer (`true`), or `timeoutMs` passed / disabled (`false`). */
export function ready(timeoutMs = 2000) {
    return session().ready(timeoutMs);
}
/** Releases held gates, flushes and closes the socket (call before the process exits). */
export function dispose(timeoutMs = 1000) {
    return current ? current.dispose(timeoutMs) : Promise.resolve();
}
/**
 * Runs `fn` as one named run: every event inside it, however many awaits deep, belongs to
 * the run (AsyncLocalStorage). `fn` receives the run's context: pass `ctx.signal` to
 * `generateText({ abortSignal })` and your own I/O so the debugger's abort reaches them.
 * Disabled, it still calls `fn` with a working context. Errors of `fn` propagate untouched.
 */
export async function run(name, fn, options = {}) {
    const s = options.session ?? session();
    const ctx = new RunContext(newId('run'), name);
    const scope = { run: ctx, parentId: `agent:${name}` };
    if (!s.live)
        return scopes.run(scope, () => fn(ctx));
    s.startRun(ctx, options.meta, options.input);
    const started = performance.now();
    let result;
    try {
        result = await scopes.run(scope, () => fn(ctx));
    }
    catch (error) {
        const status = ctx.aborted || isAbortError(error) ? 'aborted' : 'error';
        s.finishRun(ctx, status, performance.now() - started, undefined, error);
        throw error;
    }
    s.finishRun(ctx, ctx.aborted ? 'aborted' : 'ok', performance.now() - started, jsonish(result), undefined);
    return result;
}
function jsonish(value) {
    const t = typeof value;
    if (value === null || t === 'string' || t === 'number' || t === 'boolean')
        return value;
    if (t === 'object' && (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype))
        return value;
    return undefined;
}
/**
 * Wraps a function as a tool node `tool:<name>`: a before gate (inject returns the viewer's
 * value without calling it; continue may carry an edited argument), an error gate (retry
 * re-runs it, inject returns a value instead of the error) and an after gate. The input shown
 * is the first argument (all of them when there are several). Disabled: returns `fn` itself
 * (a sync `fn` in an async pass-through).
 */
export function tool(name, fn, options = {}) {
    const initial = options.session ?? session();
    if (!initial.enabled) {
        // Identity for an async function; a sync one only gains the promise the type promises.
        return fn.constructor?.name === 'AsyncFunction' ? fn : async (...args) => fn(...args);
    }
    const kind = options.kind ?? 'tool';
    return (...args) => {
        const s = options.session ?? session();
        if (!s.live)
            return Promise.resolve(fn(...args));
        const single = args.length === 1;
        const spec = { kind, name, nodeId: options.nodeId, input: single ? args[0] : args, editable: true };
        return executeNode(s, spec, (input) => fn(...(single ? [input] : input)));
    };
}
/**
 * Runs `fn` now as one execution of a node (default kind `custom`), with the same gates as a
 * tool; nodes started inside it are its children.
 */
export function span(name, fn, options = {}) {
    const s = options.session ?? session();
    const kind = options.kind ?? 'custom';
    if (!s.live) {
        const run = currentRun() ?? new RunContext('detached', name);
        const ctx = { runId: run.runId, nodeId: `${kind}:${name}`, instanceId: '', signal: run.signal, usage() { }, finishReason() { }, token() { } };
        return Promise.resolve().then(() => fn(ctx));
    }
    return executeNode(s, { kind, name, nodeId: options.nodeId, input: options.input }, (_input, ctx) => fn(ctx));
}
/** Emits one raw event into the current run (or the implicit run). */
export function emit(type, payload) {
    session().emit(type, payload);
}
