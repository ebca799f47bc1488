// The session: one per process; events, the ring buffer, gates and the transport meet here.
import { performance } from 'node:perf_hooks';
import { currentRun, RunContext } from './context.js';
import { resolveEnabled, resolveUrl } from './env.js';
import { toErrorInfo } from './errors.js';
import { CONTINUE, GateEngine, shapeMismatch } from './gates.js';
import { newId, nextId } from './ids.js';
import { CAPABILITIES, PROTOCOL_VERSION, serializeEnvelope, WILDCARD_RUN_ID, } from './protocol.js';
import { eagerFrame, EventFrame } from './frame.js';
import { RingBuffer } from './ring.js';
import { DEFAULT_SEND_BUFFER_BYTES, Transport } from './transport.js';
import { SDK_NAME, VERSION } from './version.js';
import { Warner } from './warn.js';
const CONTINUE_PROMISE = Promise.resolve(CONTINUE);
const ACTIONS = new Set(['continue', 'retry', 'inject', 'abort']);
const FAIL_OPEN = { principal: { kind: 'fail-open' } };
const MIN_SEND_BUFFER_BYTES = 64 * 1024;
/** The Mindgate client session. Never throws into the host. */
export class Session {
    /** Events flow and gates can hold. */
    enabled;
    /** The app name every run carries. */
    app;
    /** The ingest URL. */
    url;
    #warner;
    #warnFrame;
    #ring;
    #engine = new GateEngine();
    #transport;
    #meta;
    #tokenIntervalMs;
    #tokens = new Map();
    #tokenTimer = null;
    #seq = 0;
    #started = false;
    #disposed = false;
    #implicit = null;
    #sessionToken = null;
    #hubCapabilities = new Set();
    #readyWaiters = new Set();
    constructor(options = {}) {
        const env = options.env ?? process.env;
        this.enabled = resolveEnabled(options.enabled, env);
        this.app = options.app ?? 'node';
        this.url = resolveUrl(options.url, env);
        this.#meta = options.meta;
        this.#tokenIntervalMs = options.tokenIntervalMs ?? 34;
        this.#warner = new Warner(60_000, options.logger ?? ((m) => console.warn(m)));
        this.#warnFrame = (kind, message, error) => this.#warner.warn(kind, message, error);
        this.#ring = new RingBuffer(this.enabled ? (options.bufferSize ?? 2000) : 1);
        const sendBufferBytes = Math.max(MIN_SEND_BUFFER_BYTES, options.sendBufferBytes ?? DEFAULT_SEND_BUFFER_BYTES);
        const timing = {
            connectTimeoutMs: 300,
            handshakeTimeoutMs: 1000,
            retryMinMs: 100,
            retryMaxMs: 5000,
            flushIntervalMs: 20,
            ...options.timing,
        };
        this.#transport = this.enabled
            ? new Transport(this.url, options.token, timing, {
                buildHello: () => this.#hello(),
                onAttached: (ack) => this.#attached(ack),
                onDetached: () => this.#detached(),
                onControl: (envelope) => this.#control(envelope),
            }, this.#warner, this.#ring, sendBufferBytes)
            : null;
    }
    /** Enabled and not disposed: events are recorded and gates may hold. */
    get live() {
        return this.enabled && !this.#disposed;
    }
    /** Reports a value cut to the payload budget, or one that could not be serialised (rate-limited). @internal */
    get warnFrame() {
        return this.#warnFrame;
    }
    /** Handshake complete: breakpoints are armed. */
    get attached() {
        return this.#transport?.attached ?? false;
    }
    /** Counters. */
    stats() {
        return {
            enabled: this.enabled,
            attached: this.attached,
            buffered: this.#ring.size,
            dropped: this.#ring.dropped,
            unsentDropped: this.#transport?.unsentDropped ?? 0,
            socketBuffered: this.#transport?.socketBufferedBytes ?? 0,
            heldGates: this.#engine.held.size,
            seq: this.#seq,
            connectAttempts: this.#transport?.attempts ?? 0,
        };
    }
    /** The viewer's debug state as this session holds it (forgotten while detached). */
    armed() {
        return { breakpoints: this.#engine.breakpoints.map((m) => ({ ...m })), mode: this.#engine.mode };
    }
    /** Resolves `true` once attached (breakpoints armed), `false` after `timeoutMs` or when disabled. */
    ready(timeoutMs = 2000) {
        if (!this.live || this.#transport === null)
            return Promise.resolve(false);
        try {
            this.#start();
            this.#transport.kick();
            if (this.#transport.attached)
                return Promise.resolve(true);
            return new Promise((resolve) => {
                const waiter = (attached) => {
                    clearTimeout(timer);
                    this.#readyWaiters.delete(waiter);
                    resolve(attached);
                };
                const timer = setTimeout(() => waiter(false), timeoutMs);
                this.#readyWaiters.add(waiter);
            });
        }
        catch (error) {
            this.#warner.warn('ready', 'internal error in ready(); carrying on detached', error);
            return Promise.resolve(false);
        }
    }
    /** Emits one event into the current run (or the implicit run of stray events). */
    emit(type, payload) {
        if (!this.live)
            return;
        try {
            this.emitTo(this.runIdForEvent(), type, payload);
        }
        catch (error) {
            this.#warner.warn('emit', 'internal error in emit(); Mindgate degrading', error);
        }
    }
    /**
     * Emits one event into run `runId`, serialised now: its payload may hold the host's values,
     * which may change after the emit. Never throws.
     */
    emitTo(runId, type, payload) {
        if (!this.live)
            return;
        try {
            this.#start();
            this.#push(eagerFrame(this.#seq, runId, type, payload, this.#warnFrame), type);
        }
        catch (error) {
            this.#warner.warn('emit', 'internal error while emitting; the event is lost', error);
        }
    }
    /**
     * Emits one event whose payload the SDK built from strings and numbers and never changes
     * afterwards (token deltas, hints, gate and error events): it is serialised only when it is
     * sent or replayed, so detached it costs a ring slot. Never throws.
     */
    emitOwned(runId, type, payload) {
        if (!this.live)
            return;
        try {
            this.#start();
            this.#push(new EventFrame(this.#seq, runId, type, payload, this.#warnFrame), type);
        }
        catch (error) {
            this.#warner.warn('emit', 'internal error while emitting; the event is lost', error);
        }
    }
    #push(frame, type) {
        this.#seq += 1;
        this.#ring.push(frame);
        // Gate events (`exec.paused`, `exec.resumed`, `exec.refused`) go out on the next turn; the rest within the flush interval.
        this.#transport?.notify(type.startsWith('exec.'));
    }
    /** The current run's id, or the implicit run's (started on first use). */
    runIdForEvent() {
        return (currentRun() ?? this.implicitRun()).runId;
    }
    /** The run that collects events emitted outside any `run()`. */
    implicitRun() {
        if (this.#implicit === null) {
            this.#implicit = new RunContext(newId('run'), 'implicit');
            this.emitTo(this.#implicit.runId, 'run.started', {
                app: this.app,
                sdk: { name: SDK_NAME, version: VERSION },
                meta: { ...this.#meta, name: 'implicit', implicit: true },
            });
        }
        return this.#implicit;
    }
    /** `run.started` and the run's agent node. */
    startRun(run, meta, input) {
        this.emitTo(run.runId, 'run.started', {
            app: this.app,
            sdk: { name: SDK_NAME, version: VERSION },
            meta: { ...this.#meta, ...meta, name: run.name },
        });
        const started = { nodeId: `agent:${run.name}`, kind: 'agent', name: run.name, instanceId: run.runId };
        if (input !== undefined)
            started.input = input;
        this.emitTo(run.runId, 'node.started', started);
    }
    /** The agent node's end and `run.finished`. */
    finishRun(run, status, durationMs, output, error) {
        this.flushTokens();
        const nodeId = `agent:${run.name}`;
        if (status === 'error')
            this.emitOwned(run.runId, 'node.error', { nodeId, instanceId: run.runId, error: toErrorInfo(error) });
        const finished = { nodeId, instanceId: run.runId, durationMs, status };
        if (output !== undefined && status === 'ok')
            finished.output = output;
        this.emitTo(run.runId, 'node.finished', finished);
        const payload = { status };
        if (status === 'error')
            payload.error = toErrorInfo(error);
        this.emitOwned(run.runId, 'run.finished', payload);
    }
    /**
     * A gate at `point` of `node`. Detached, or attached with nothing matching, it returns one
     * shared resolved promise (no allocation); otherwise it holds until the viewer releases it
     * or the socket goes (then `continue`).
     */
    gate(point, node, hold) {
        if (!this.#armed())
            return CONTINUE_PROMISE;
        try {
            const reason = this.#engine.reason(point, node);
            if (reason === null)
                return CONTINUE_PROMISE;
            return this.#hold(point, node, reason, hold);
        }
        catch (error) {
            this.#warner.warn('gate', 'internal gate error; continuing', error);
            return CONTINUE_PROMISE;
        }
    }
    /**
     * Whether a gate at `point` of `node` would hold now (a breakpoint matches or step mode):
     * `false` detached and attached with nothing matching, without allocating, so callers skip
     * building the gate's options and awaiting it. Never throws.
     */
    holds(point, node) {
        if (!this.#armed())
            return false;
        try {
            return this.#engine.reason(point, node) !== null;
        }
        catch {
            return true; // `gate` reports the error and continues
        }
    }
    #armed() {
        return this.#started && !this.#disposed && this.#transport !== null && this.#transport.attached;
    }
    /** Queues streamed text of a node instance (sent batched as `node.token`). */
    token(runId, nodeId, instanceId, channel, text) {
        if (!this.live || !text)
            return;
        try {
            const key = `${runId}\u0000${instanceId}`;
            let pending = this.#tokens.get(key);
            if (!pending) {
                pending = { runId, nodeId, instanceId, deltas: [] };
                this.#tokens.set(key, pending);
            }
            const last = pending.deltas[pending.deltas.length - 1];
            if (last && last.t === channel)
                last.v += text;
            else
                pending.deltas.push({ t: channel, v: text });
            if (this.#tokenTimer === null) {
                this.#tokenTimer = setTimeout(() => this.flushTokens(), this.#tokenIntervalMs);
                this.#tokenTimer.unref();
            }
        }
        catch (error) {
            this.#warner.warn('token', 'internal error queueing tokens', error);
        }
    }
    /** Sends every queued token batch now. */
    flushTokens() {
        if (this.#tokenTimer !== null)
            clearTimeout(this.#tokenTimer);
        this.#tokenTimer = null;
        if (this.#tokens.size === 0)
            return; // every node's end calls this: no allocation when nothing is queued
        const batches = [...this.#tokens.values()];
        this.#tokens.clear();
        for (const b of batches)
            this.emitOwned(b.runId, 'node.token', { nodeId: b.nodeId, instanceId: b.instanceId, deltas: b.deltas });
    }
    /**
     * Releases every held gate (`continue`), finishes the implicit run, waits up to `timeoutMs`
     * for the socket to drain and closes it. Idempotent; never throws.
     */
    async dispose(timeoutMs = 1000) {
        if (this.#disposed)
            return;
        try {
            this.flushTokens();
            this.#releaseAll();
            if (this.#implicit !== null)
                this.emitTo(this.#implicit.runId, 'run.finished', { status: 'ok' });
            this.#transport?.notify(true);
            const deadline = Date.now() + timeoutMs;
            while (this.attached && (this.#transport?.pendingBytes ?? 0) > 0 && Date.now() < deadline) {
                await new Promise((r) => setTimeout(r, 5));
            }
        }
        catch (error) {
            this.#warner.warn('dispose', 'internal error while disposing', error);
        }
        this.#disposed = true;
        this.#transport?.dispose();
        for (const waiter of [...this.#readyWaiters])
            waiter(false);
    }
    #start() {
        if (this.#started || this.#transport === null)
            return;
        this.#started = true;
        this.#transport.kick();
    }
    #hold(point, node, reason, hold) {
        const pauseId = nextId('pause');
        const editable = hold.editable === true && point === 'before' && this.#hubCapabilities.has('edit-input');
        const signal = hold.signal;
        return new Promise((resolve) => {
            const opened = performance.now();
            // The host aborting its run releases the gate with `abort` (the app's own release).
            const onAbort = () => held.settle({ action: 'abort' }, FAIL_OPEN);
            const held = {
                pauseId,
                runId: hold.runId,
                node,
                point,
                input: hold.input,
                editable,
                settle: (decision, resumed) => {
                    if (!this.#engine.held.delete(pauseId))
                        return;
                    signal?.removeEventListener('abort', onAbort);
                    try {
                        hold.onHeld?.(performance.now() - opened);
                    }
                    catch {
                        // The caller's bookkeeping must not keep a gate shut.
                    }
                    // Stored before anything the released body does.
                    this.emitTo(hold.runId, 'exec.resumed', { pauseId, action: decision.action, ...resumed });
                    this.#transport?.holdOpen(this.#engine.held.size > 0);
                    resolve(decision);
                },
            };
            this.#engine.held.set(pauseId, held);
            this.#transport?.holdOpen(true);
            const paused = { pauseId, nodeId: node.nodeId, point, reason };
            if (editable)
                paused.editable = true;
            this.emitOwned(hold.runId, 'exec.paused', paused);
            if (signal?.aborted)
                onAbort();
            else
                signal?.addEventListener('abort', onAbort, { once: true });
        });
    }
    #releaseAll() {
        for (const held of [...this.#engine.held.values()])
            held.settle(CONTINUE, FAIL_OPEN);
    }
    #hello() {
        const payload = {
            versions: { protocol: PROTOCOL_VERSION, client: VERSION },
            capabilities: [...CAPABILITIES],
            app: this.app,
            sdk: { name: SDK_NAME, version: VERSION },
        };
        if (this.#sessionToken !== null)
            payload.resumeToken = this.#sessionToken;
        const frame = serializeEnvelope(this.#seq, WILDCARD_RUN_ID, 'hello', payload);
        this.#seq += 1;
        return frame;
    }
    #attached(ack) {
        try {
            if (typeof ack.sessionToken === 'string' && ack.sessionToken)
                this.#sessionToken = ack.sessionToken;
            this.#hubCapabilities = new Set(Array.isArray(ack.hubCapabilities) ? ack.hubCapabilities.filter((c) => typeof c === 'string') : []);
            this.#engine.arm(ack.breakpoints, ack.mode);
        }
        catch (error) {
            this.#warner.warn('attach', 'internal error while attaching', error);
        }
        for (const waiter of [...this.#readyWaiters])
            waiter(true);
    }
    #detached() {
        try {
            // Fail-open: no viewer, no holds; its breakpoints are forgotten until the next hello.ack.
            this.#engine.disarm();
            this.#releaseAll();
        }
        catch (error) {
            this.#warner.warn('detach', 'internal error while detaching', error);
        }
    }
    #control(envelope) {
        try {
            const payload = envelope.payload;
            switch (envelope.type) {
                case 'exec.resume':
                    this.#resume(payload);
                    break;
                case 'breakpoint.set':
                    if (typeof payload.matcher === 'object' && payload.matcher !== null)
                        this.#engine.add(payload.matcher);
                    break;
                case 'breakpoint.clear':
                    if (typeof payload.matcher === 'object' && payload.matcher !== null)
                        this.#engine.remove(payload.matcher);
                    break;
                case 'mode.set':
                    if (payload.mode === 'run' || payload.mode === 'step')
                        this.#engine.mode = payload.mode;
                    break;
                default:
                // Echoes, `ingest.refused`, future additions: ignored.
            }
        }
        catch (error) {
            this.#warner.warn('control', 'internal error handling a control frame', error);
        }
    }
    #resume(payload) {
        const { pauseId, action, requestId } = payload;
        if (typeof pauseId !== 'string' || typeof action !== 'string' || !ACTIONS.has(action))
            return;
        const held = this.#engine.held.get(pauseId);
        if (!held)
            return;
        const resumed = {};
        if (typeof requestId === 'string')
            resumed.requestId = requestId;
        const refuse = (code, message) => {
            const refused = { pauseId, code, message };
            if (typeof requestId === 'string')
                refused.requestId = requestId;
            this.emitTo(held.runId, 'exec.refused', refused);
        };
        if (payload.input !== undefined && action === 'continue') {
            if (!held.editable)
                return refuse('unsupported', `the ${held.point} gate of ${held.node.nodeId} takes no edited input`);
            const mismatch = shapeMismatch(held.input, payload.input);
            if (mismatch !== null)
                return refuse('shape', `the edited input does not fit: ${mismatch}`);
            held.settle({ action: 'continue', input: payload.input, edited: true }, { ...resumed, edited: { after: payload.input } });
            return;
        }
        if (action === 'inject') {
            held.settle({ action: 'inject', output: payload.output }, resumed);
            return;
        }
        held.settle(action === 'continue' ? CONTINUE : { action: action }, resumed);
    }
}
