import { type Envelope } from './protocol.js';
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
export declare const DEFAULT_SEND_BUFFER_BYTES: number;
/** Whether `url` dials the loopback interface. */
export declare function isLoopback(url: string): boolean;
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
/** The connection to `/ingest`. Never throws into callers. */
export declare class Transport {
    #private;
    private readonly url;
    private readonly token;
    private readonly timing;
    private readonly hooks;
    private readonly warner;
    private readonly ring;
    private readonly sendBufferBytes;
    /** Sockets opened since the start (a test of the disabled mode counts them on the server). */
    attempts: number;
    constructor(url: string, token: string | undefined, timing: TransportTiming, hooks: TransportHooks, warner: Warner, ring: RingBuffer, sendBufferBytes?: number);
    /** Handshake complete. */
    get attached(): boolean;
    /** Starts connecting unless already connecting or attached; a waiting retry is brought forward. */
    kick(): void;
    /**
     * New events are in the ring: when attached they are written with the socket corked within
     * `flushIntervalMs` (`urgent`: on the next turn of the event loop), so a burst of events
     * costs one write, not one per frame.
     */
    notify(urgent?: boolean): void;
    /** Events the ring dropped while attached before they could be sent (a viewer slower than the app). */
    get unsentDropped(): number;
    /** Events not yet sent plus bytes written to the socket but not yet taken by the kernel. */
    get pendingBytes(): number;
    /** Bytes written to the socket and not yet taken by the kernel (bounded by `sendBufferBytes` plus one frame). */
    get socketBufferedBytes(): number;
    /**
     * While a gate is held the socket keeps the process alive (the release comes through it);
     * otherwise it does not, so an instrumented script exits when its work is done.
     */
    holdOpen(open: boolean): void;
    /** Closes the socket for good. */
    dispose(): void;
}
