// GraphMind wire protocol v1: the envelope and the constants the SDK sends.
export * from './protocol.generated.js';
import type { PayloadByType } from './protocol.generated.js';

/** The protocol major this SDK speaks (`gm`). */
export const PROTOCOL_VERSION = 1;

/** `runId` of messages bound to no run (handshake, breakpoints, mode). */
export const WILDCARD_RUN_ID = '*';

/** What this SDK can do at a gate, announced in `hello`. */
export const CAPABILITIES = ['pause', 'step', 'inject', 'retry', 'abort', 'run-claim', 'edit-input'] as const;

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
export function serializeEnvelope(seq: number, runId: string, type: string, payload: unknown): string {
  return envelopeText(seq, Date.now(), runId, type, payload);
}

/**
 * One frame as text: the same string as `JSON.stringify({gm, seq, ts, runId, type, payload})`,
 * written without building the envelope object (only the payload goes through `JSON.stringify`).
 */
export function envelopeText(seq: number, ts: number, runId: string, type: string, payload: unknown): string {
  return envelopeAround(seq, ts, runId, type, JSON.stringify(payload));
}

/**
 * One frame as text around a payload already serialised (`body`, its JSON text, `undefined`
 * for no payload): the same string as `JSON.stringify` of the envelope.
 */
export function envelopeAround(seq: number, ts: number, runId: string, type: string, body: string | undefined): string {
  if (body === undefined || !Number.isFinite(seq) || !Number.isFinite(ts)) {
    return JSON.stringify({ gm: PROTOCOL_VERSION, seq, ts, runId, type, payload: body === undefined ? undefined : JSON.parse(body) });
  }
  return `{"gm":${PROTOCOL_VERSION},"seq":${seq},"ts":${ts},"runId":${JSON.stringify(runId)},"type":${JSON.stringify(type)},"payload":${body}}`;
}

/** A parsed incoming frame, or `null` when it is not a v1 envelope (never throws). */
export function parseEnvelope(text: string): Envelope | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const env = value as Record<string, unknown>;
    if (env.gm !== PROTOCOL_VERSION || typeof env.type !== 'string') return null;
    if (typeof env.payload !== 'object' || env.payload === null || Array.isArray(env.payload)) return null;
    return env as Envelope;
  } catch {
    return null;
  }
}
