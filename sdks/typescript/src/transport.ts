// The WebSocket to the viewer: connect, hello / hello.ack, reconnect with backoff, fail-open.
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { parseEnvelope, type Envelope } from './protocol.js';
import { frameText } from './frame.js';
import type { RingBuffer } from './ring.js';
import type { Warner } from './warn.js';

/** Timing of the transport (milliseconds). */
export interface TransportTiming {
  /** TCP + upgrade budget of one attempt. */
  connectTimeoutMs: number;
  /** How long `hello.ack` may take after the upgrade. */
  handshakeTimeoutMs: number;
  /** First reconnect delay; doubled after each failed attempt. */
  retryMinMs: number;
  /** Longest reconnect delay. */
  retryMaxMs: number;
  /**
   * How long new events may wait to be written while attached, so that a burst costs one
   * socket write, not one per event (gate events are written on the next turn of the event
   * loop); 0 writes every event on the next turn.
   */
  flushIntervalMs: number;
}

/** Default bound of the bytes written to the socket and not yet taken by the kernel (1 MiB). */
export const DEFAULT_SEND_BUFFER_BYTES = 1024 * 1024;

/** Hosts whose traffic never crosses an intermediary: frames to them are sent unmasked. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** A zero masking key: `ws` then writes the frame as is (RFC 6455 masking guards against proxies a loopback socket never meets). */
function zeroMask(mask: Buffer): void {
  mask.fill(0);
}

/** Whether `url` dials the loopback interface. */
export function isLoopback(url: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** What the session does when the transport changes state or a control arrives. */
export interface TransportHooks {
  /** The `hello` frame to send (called on every attempt). */
  buildHello(): string;
  /** `hello.ack` arrived: the viewer's state; the session arms and replays. */
  onAttached(ack: Record<string, unknown>): void;
  /** The socket is gone after an attach: release every held gate. */
  onDetached(): void;
  /** A frame after the handshake. */
  onControl(envelope: Envelope): void;
}

type State = 'idle' | 'connecting' | 'attached' | 'waiting' | 'disposed';

/** The connection to `/ingest`. Never throws into callers. */
export class Transport {
  #state: State = 'idle';
  #ws: WebSocket | null = null;
  #socket: Socket | null = null;
  #retryDelay: number;
  #retryTimer: NodeJS.Timeout | null = null;
  #holdsOpen = false;
  /** The absolute ring index of the next event to send while attached. */
  #cursor = 0;
  /** A flush is scheduled: on a timer (`flushIntervalMs`) or on the next turn (`immediate`). */
  #flushScheduled: 'no' | 'timer' | 'immediate' = 'no';
  #flushTimer: NodeJS.Timeout | null = null;
  #awaitingDrain = false;
  #unsentDropped = 0;
  /** Sockets opened since the start (a test of the disabled mode counts them on the server). */
  attempts = 0;

  constructor(
    private readonly url: string,
    private readonly token: string | undefined,
    private readonly timing: TransportTiming,
    private readonly hooks: TransportHooks,
    private readonly warner: Warner,
    private readonly ring: RingBuffer,
    private readonly sendBufferBytes: number = DEFAULT_SEND_BUFFER_BYTES,
  ) {
    this.#retryDelay = timing.retryMinMs;
  }

  /** Handshake complete. */
  get attached(): boolean {
    return this.#state === 'attached';
  }

  /** Starts connecting unless already connecting or attached; a waiting retry is brought forward. */
  kick(): void {
    if (this.#state === 'waiting') {
      if (this.#retryTimer) clearTimeout(this.#retryTimer);
      this.#retryTimer = null;
      this.#state = 'idle';
    }
    if (this.#state === 'idle') this.#connect();
  }

  /**
   * New events are in the ring: when attached they are written with the socket corked within
   * `flushIntervalMs` (`urgent`: on the next turn of the event loop), so a burst of events
   * costs one write, not one per frame.
   */
  notify(urgent = false): void {
    if (this.#state !== 'attached' || this.#awaitingDrain || this.#flushScheduled === 'immediate') return;
    if (urgent || this.timing.flushIntervalMs <= 0) {
      this.#cancelFlushTimer();
      this.#flushScheduled = 'immediate';
      setImmediate(() => this.#flush());
      return;
    }
    if (this.#flushScheduled === 'timer') return;
    this.#flushScheduled = 'timer';
    this.#flushTimer = setTimeout(() => this.#flush(), this.timing.flushIntervalMs);
  }

  #cancelFlushTimer(): void {
    if (this.#flushTimer !== null) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
  }

  /**
   * Sends the ring from the cursor until the socket holds `sendBufferBytes` not yet taken by
   * the kernel; the rest waits in the ring for the socket's `drain`. Memory stays bounded by
   * the ring: against a slow viewer the oldest unsent events are dropped and counted.
   */
  #flush(): void {
    this.#flushScheduled = 'no';
    this.#cancelFlushTimer();
    const ws = this.#ws;
    if (this.#state !== 'attached' || ws === null) return;
    const ring = this.ring;
    if (this.#cursor < ring.start) {
      this.#unsentDropped += ring.start - this.#cursor;
      this.#cursor = ring.start;
    }
    const socket = this.#socket;
    try {
      // Rounds of corked writes: each uncork hands the round to the kernel at once, so the
      // bound stops the sending only when the kernel stops taking (a viewer not reading).
      while (this.#cursor < ring.end && ws.bufferedAmount < this.sendBufferBytes) this.#writeRound(ws, socket);
    } catch (error) {
      this.warner.warn('send', 'sending frames failed; they stay in the replay buffer', error);
    }
    if (this.#cursor < ring.end && socket !== null && !this.#awaitingDrain) {
      this.#awaitingDrain = true;
      socket.once('drain', () => {
        this.#awaitingDrain = false;
        this.notify(true);
      });
    }
  }

  /** Writes frames from the cursor, corked, until the socket holds `sendBufferBytes`. */
  #writeRound(ws: WebSocket, socket: Socket | null): void {
    const ring = this.ring;
    socket?.cork();
    try {
      while (this.#cursor < ring.end && ws.bufferedAmount < this.sendBufferBytes) {
        const frame = ring.at(this.#cursor);
        const text = frame === undefined ? null : frameText(frame);
        this.#cursor += 1;
        if (text) ws.send(text);
      }
    } finally {
      socket?.uncork();
    }
  }

  /** Events the ring dropped while attached before they could be sent (a viewer slower than the app). */
  get unsentDropped(): number {
    const behind = this.#state === 'attached' ? Math.max(0, this.ring.start - this.#cursor) : 0;
    return this.#unsentDropped + behind;
  }

  /** Events not yet sent plus bytes written to the socket but not yet taken by the kernel. */
  get pendingBytes(): number {
    if (this.#state !== 'attached') return 0;
    return this.ring.end - Math.max(this.ring.start, this.#cursor) + (this.#ws?.bufferedAmount ?? 0);
  }

  /** Bytes written to the socket and not yet taken by the kernel (bounded by `sendBufferBytes` plus one frame). */
  get socketBufferedBytes(): number {
    return this.#ws?.bufferedAmount ?? 0;
  }

  /**
   * While a gate is held the socket keeps the process alive (the release comes through it);
   * otherwise it does not, so an instrumented script exits when its work is done.
   */
  holdOpen(open: boolean): void {
    this.#holdsOpen = open;
    this.#applyRef();
  }

  /** Closes the socket for good. */
  dispose(): void {
    const wasAttached = this.#state === 'attached';
    this.#state = 'disposed';
    this.#cancelFlushTimer();
    this.#flushScheduled = 'no';
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    const ws = this.#ws;
    this.#ws = null;
    if (ws) {
      try {
        ws.close(1000, 'dispose');
      } catch {
        ws.terminate();
      }
    }
    if (wasAttached) this.hooks.onDetached();
  }

  #applyRef(): void {
    const socket = this.#socket;
    if (!socket) return;
    try {
      if (this.#holdsOpen) socket.ref();
      else socket.unref();
    } catch {
      // A socket already destroyed needs nothing.
    }
  }

  #connect(): void {
    this.#state = 'connecting';
    this.attempts += 1;
    let ws: WebSocket;
    try {
      const headers = this.token ? { Authorization: `Bearer ${this.token}` } : undefined;
      const generateMask = isLoopback(this.url) ? zeroMask : undefined;
      ws = new WebSocket(this.url, { headers, handshakeTimeout: this.timing.connectTimeoutMs, perMessageDeflate: false, generateMask });
    } catch (error) {
      this.warner.warn('connect', `cannot connect to ${this.url}; running detached`, error);
      this.#scheduleRetry();
      return;
    }
    this.#ws = ws;
    let handshake: NodeJS.Timeout | null = null;
    const finish = () => {
      if (handshake) clearTimeout(handshake);
      handshake = null;
    };
    ws.on('upgrade', (res) => {
      this.#socket = res.socket as Socket;
      this.#applyRef();
    });
    ws.on('open', () => {
      handshake = setTimeout(() => ws.terminate(), this.timing.handshakeTimeoutMs);
      handshake.unref();
      try {
        ws.send(this.hooks.buildHello());
      } catch (error) {
        this.warner.warn('hello', 'sending hello failed', error);
        ws.terminate();
      }
    });
    ws.on('message', (data) => {
      const envelope = parseEnvelope(data.toString());
      if (envelope === null) return;
      if (this.#state === 'connecting' && this.#ws === ws) {
        if (envelope.type !== 'hello.ack') return;
        finish();
        this.#state = 'attached';
        this.#retryDelay = this.timing.retryMinMs;
        this.hooks.onAttached(envelope.payload as Record<string, unknown>);
        // Replay on attach, oldest first, with the original seq: the hub deduplicates.
        this.#cursor = this.ring.start;
        this.notify(true);
        return;
      }
      if (this.#state === 'attached' && this.#ws === ws) this.hooks.onControl(envelope);
    });
    ws.on('error', () => {
      // 'close' follows; the reason is reported there once per interval.
    });
    ws.on('close', () => {
      finish();
      if (this.#ws !== ws) return;
      this.#ws = null;
      this.#socket = null;
      this.#awaitingDrain = false;
      const wasAttached = this.#state === 'attached';
      // Unsent events the ring dropped while attached stay counted; the rest is replayed on the next attach.
      if (wasAttached && this.#cursor < this.ring.start) this.#unsentDropped += this.ring.start - this.#cursor;
      if (this.#state === 'disposed') return;
      this.#scheduleRetry();
      if (wasAttached) this.hooks.onDetached();
    });
  }

  #scheduleRetry(): void {
    this.#state = 'waiting';
    const delay = this.#retryDelay;
    this.#retryDelay = Math.min(this.#retryDelay * 2, this.timing.retryMaxMs);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      if (this.#state !== 'waiting') return;
      this.#state = 'idle';
      this.#connect();
    }, delay);
    this.#retryTimer.unref();
  }
}
