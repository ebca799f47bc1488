// One event as the ring buffer keeps it: its envelope fields and its payload's JSON text, made
// once, either when it is emitted (a payload holding the host's values, which may change
// later) or when it is first sent or replayed (a payload the SDK built and never changes:
// token deltas, hints, gate events, a model step's output). A detached process that nobody
// watches then never serialises those. The envelope around the payload is written at each
// send, so a kept event costs its object and one flat string, nothing for the collector to
// trace.
import { envelopeAround } from './protocol.js';
import { payloadWithinBudget } from './shrink.js';
/** One event of the ring buffer. */
export class EventFrame {
    seq;
    ts;
    runId;
    type;
    warn;
    /** The payload's JSON text once serialised (`undefined` also for an `undefined` payload). */
    #body;
    /** The SDK's own payload, until it is serialised. */
    #payload;
    /** `#body` is made; `null` when the payload could not be serialised. */
    #state;
    constructor(
    /** The envelope's `seq`. */
    seq, 
    /** The envelope's `ts` (ms since the epoch, taken at emit). */
    ts, 
    /** The envelope's `runId`. */
    runId, 
    /** The envelope's `type`. */
    type, payload, warn) {
        this.seq = seq;
        this.ts = ts;
        this.runId = runId;
        this.type = type;
        this.warn = warn;
        this.#payload = payload;
        this.#state = 'pending';
    }
    /** Serialised now: the payload holds values the host may change after the emit. Throws when it cannot be serialised. */
    static eager(seq, runId, type, payload, warn) {
        const frame = new EventFrame(seq, Date.now(), runId, type, undefined, warn);
        frame.#body = payloadWithinBudget(type, payload, (m) => warn(`shrink:${type}`, m));
        frame.#state = 'ready';
        return frame;
    }
    /** Serialised on first use: the payload is the SDK's own and is never changed after the emit. */
    static owned(seq, runId, type, payload, warn) {
        return new EventFrame(seq, Date.now(), runId, type, payload, warn);
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
