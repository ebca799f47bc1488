export * from './protocol.generated.js';
import type { PayloadByType } from './protocol.generated.js';
/** The protocol major this SDK speaks (`gm`). */
export declare const PROTOCOL_VERSION = 1;
/** `runId` of messages bound to no run (handshake, breakpoints, mode). */
export declare const WILDCARD_RUN_ID = "*";
/** What this SDK can do at a gate, announced in `hello`. */
export declare const CAPABILITIES: readonly ["pause", "step", "inject", "retry", "abort", "run-claim", "edit-input"];
/** One frame on the wire. */
export interface Envelope<T extends string = string, P = unknown> {
    gm: number;
    seq: number;
    ts: number;
    runId: string;
    type: T;
    payload: P;
    [key: string]: unknown;
}
/** A known message type. */
export type MessageType = keyof PayloadByType;
/** The payload of a known message type. */
export type PayloadOf<T extends MessageType> = PayloadByType[T];
/** One frame as text, stamped now (the order of keys follows the seed's envelope). */
export declare function serializeEnvelope(seq: number, runId: string, type: string, payload: unknown): string;
/**
 * One frame as text: the same string as `JSON.stringify({gm, seq, ts, runId, type, payload})`,
 * written without building the envelope object (only the payload goes through `JSON.stringify`).
 */
export declare function envelopeText(seq: number, ts: number, runId: string, type: string, payload: unknown): string;
/**
 * One frame as text around a payload already serialised (`body`, its JSON text, `undefined`
 * for no payload): the same string as `JSON.stringify` of the envelope.
 */
export declare function envelopeAround(seq: number, ts: number, runId: string, type: string, body: string | undefined): string;
/** A parsed incoming frame, or `null` when it is not a v1 envelope (never throws). */
export declare function parseEnvelope(text: string): Envelope | null;
