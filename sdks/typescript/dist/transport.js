import WebSocket from 'ws';
import { parseEnvelope } from './protocol.js';
/** The connection to `/ingest`. Never throws into callers. */
export class Transport {
    url;
    token;
    timing;
    hooks;
    warner;
    #state = 'idle';
    #ws = null;
    #socket = null;
    #retryDelay;
    #retryTimer = null;
    #holdsOpen = false;
    #outbox = [];
    #flushScheduled = false;
    /** Sockets opened since the start (a test of the disabled mode counts them on the server). */
    attempts = 0;
    constructor(url, token, timing, hooks, warner) {
        this.url = url;
        this.token = token;
        this.timing = timing;
        this.hooks = hooks;
        this.warner = warner;
        this.#retryDelay = timing.retryMinMs;
    }
    /** Handshake complete. */
    get attached() {
        return this.#state === 'attached';
    }
    /** Starts connecting unless already connecting or attached; a waiting retry is brought forward. */
    kick() {
        if (this.#state === 'waiting') {
            if (this.#retryTimer)
                clearTimeout(this.#retryTimer);
            this.#retryTimer = null;
            this.#state = 'idle';
        }
        if (this.#state === 'idle')
            this.#connect();
    }
    /**
     * Queues one frame when attached (callers keep it in the ring buffer either way); the queue
     * is written on the next turn of the event loop with the socket corked, so a burst of events
     * costs one write, not one per frame.
     */
    send(frame) {
        if (this.#state !== 'attached' || this.#ws === null)
            return;
        this.#outbox.push(frame);
        if (!this.#flushScheduled) {
            this.#flushScheduled = true;
            setImmediate(() => this.#flush());
        }
    }
    #flush() {
        this.#flushScheduled = false;
        const ws = this.#ws;
        const frames = this.#outbox;
        this.#outbox = [];
        if (this.#state !== 'attached' || ws === null)
            return;
        const socket = this.#socket;
        try {
            socket?.cork();
            for (const frame of frames)
                ws.send(frame);
        }
        catch (error) {
            this.warner.warn('send', 'sending frames failed; they stay in the replay buffer', error);
        }
        finally {
            socket?.uncork();
        }
    }
    /** Frames queued or bytes written to the socket but not yet sent. */
    get pendingBytes() {
        return this.#outbox.length + (this.#ws?.bufferedAmount ?? 0);
    }
    /**
     * While a gate is held the socket keeps the process alive (the release comes through it);
     * otherwise it does not, so an instrumented script exits when its work is done.
     */
    holdOpen(open) {
        this.#holdsOpen = open;
        this.#applyRef();
    }
    /** Closes the socket for good. */
    dispose() {
        const wasAttached = this.#state === 'attached';
        this.#state = 'disposed';
        if (this.#retryTimer)
            clearTimeout(this.#retryTimer);
        this.#retryTimer = null;
        const ws = this.#ws;
        this.#ws = null;
        if (ws) {
            try {
                ws.close(1000, 'dispose');
            }
            catch {
                ws.terminate();
            }
        }
        if (wasAttached)
            this.hooks.onDetached();
    }
    #applyRef() {
        const socket = this.#socket;
        if (!socket)
            return;
        try {
            if (this.#holdsOpen)
                socket.ref();
            else
                socket.unref();
        }
        catch {
            // A socket already destroyed needs nothing.
        }
    }
    #connect() {
        this.#state = 'connecting';
        this.attempts += 1;
        let ws;
        try {
            const headers = this.token ? { Authorization: `Bearer ${this.token}` } : undefined;
            ws = new WebSocket(this.url, { headers, handshakeTimeout: this.timing.connectTimeoutMs, perMessageDeflate: false });
        }
        catch (error) {
            this.warner.warn('connect', `cannot connect to ${this.url}; running detached`, error);
            this.#scheduleRetry();
            return;
        }
        this.#ws = ws;
        let handshake = null;
        const finish = () => {
            if (handshake)
                clearTimeout(handshake);
            handshake = null;
        };
        ws.on('upgrade', (res) => {
            this.#socket = res.socket;
            this.#applyRef();
        });
        ws.on('open', () => {
            handshake = setTimeout(() => ws.terminate(), this.timing.handshakeTimeoutMs);
            handshake.unref();
            try {
                ws.send(this.hooks.buildHello());
            }
            catch (error) {
                this.warner.warn('hello', 'sending hello failed', error);
                ws.terminate();
            }
        });
        ws.on('message', (data) => {
            const envelope = parseEnvelope(data.toString());
            if (envelope === null)
                return;
            if (this.#state === 'connecting' && this.#ws === ws) {
                if (envelope.type !== 'hello.ack')
                    return;
                finish();
                this.#state = 'attached';
                this.#retryDelay = this.timing.retryMinMs;
                this.hooks.onAttached(envelope.payload);
                return;
            }
            if (this.#state === 'attached' && this.#ws === ws)
                this.hooks.onControl(envelope);
        });
        ws.on('error', () => {
            // 'close' follows; the reason is reported there once per interval.
        });
        ws.on('close', () => {
            finish();
            if (this.#ws !== ws)
                return;
            this.#ws = null;
            this.#socket = null;
            this.#outbox = [];
            const wasAttached = this.#state === 'attached';
            if (this.#state === 'disposed')
                return;
            this.#scheduleRetry();
            if (wasAttached)
                this.hooks.onDetached();
        });
    }
    #scheduleRetry() {
        this.#state = 'waiting';
        const delay = this.#retryDelay;
        this.#retryDelay = Math.min(this.#retryDelay * 2, this.timing.retryMaxMs);
        this.#retryTimer = setTimeout(() => {
            this.#retryTimer = null;
            if (this.#state !== 'waiting')
                return;
            this.#state = 'idle';
            this.#connect();
        }, delay);
        this.#retryTimer.unref();
    }
}
