// One event as the ring buffer keeps it. An event whose payload holds the host's values (which
// may change after the emit) is serialised when emitted and kept as its frame's text: one flat
// string, which the collector copies but never traces (a 2,000-event ring of objects cost the
// collector more than the serialisation itself). An event whose payload the SDK built and
// never changes (token deltas, hints, gate events, a model step's output) is kept as an
// `EventFrame` and serialised when it is first sent or replayed: a detached process that
// nobody watches never serialises it. Node events (`node.started`, `node.finished`) are kept
// so too: the host's values in them are snapshots taken at emit (`snapshot.ts`), only the
// SDK's fields around them are written late.
import { envelopeAround, PROTOCOL_VERSION } from './protocol.js';
import { MAX_PAYLOAD_CHARS, payloadWithinBudget } from './shrink.js';
/** The text of a frame, or `null` when it could not be serialised. */
export function frameText(frame) {
    return typeof frame === 'string' ? frame : frame.text();
}
/** Room for the envelope around a payload within the budget. */
const ENVELOPE_CHARS = 1024;
/**
 * The text of an event serialised now (its payload holds values the host may change after the
 * emit): one `JSON.stringify` of the envelope, a flat string, its payload held to the budget.
 * Throws only for a payload that cannot be written at all.
 */
export function eagerFrame(seq, runId, type, payload, warn) {
    const ts = Date.now();
    let text;
    try {
        text = JSON.stringify({ gm: PROTOCOL_VERSION, seq, ts, runId, type, payload });
    }
    catch {
        // Cycles, BigInt, throwing getters: the careful path below.
    }
    if (text !== undefined && text.length <= MAX_PAYLOAD_CHARS + ENVELOPE_CHARS)
        return text;
    return envelopeAround(seq, ts, runId, type, payloadWithinBudget(type, payload, (m) => warn(`shrink:${type}`, m)));
}
/** An event whose payload the SDK built and never changes: serialised on first use. */
export class EventFrame {
    seq;
    runId;
    type;
    warn;
    /** The payload's JSON text once serialised (`undefined` also for an `undefined` payload). */
    #body;
    /** The SDK's own payload, until it is serialised. */
    #payload;
    /** `#body` is made; `null` when the payload could not be serialised. */
    #state = 'pending';
    /** The envelope's `ts` (ms since the epoch, taken at emit). */
    ts = Date.now();
    constructor(
    /** The envelope's `seq`. */
    seq, 
    /** The envelope's `runId`. */
    runId, 
    /** The envelope's `type`. */
    type, payload, warn) {
        this.seq = seq;
        this.runId = runId;
        this.type = type;
        this.warn = warn;
        this.#payload = payload;
    }
    /** The frame's text, or `null` when it could not be serialised (warned once per kind). */
    text() {
        try {
            if (this.#state === 'pending') {
                const payload = this.#payload;
                this.#payload = undefined;
                this.#state = null;
                this.#body = payloadWithinBudget(this.type, payload, (m) => this.warn(`shrink:${this.type}`, m));
                this.#state = 'ready';
            }
            if (this.#state === null)
                return null;
            return envelopeAround(this.seq, this.ts, this.runId, this.type, this.#body);
        }
        catch (error) {
            this.#state = null;
            this.#body = undefined;
            this.warn('emit', 'internal error while serialising an event; the event is lost', error);
            return null;
        }
    }
}
