// One event as the ring buffer keeps it: its envelope fields, and its text made once, either
// when it is emitted (a payload holding the host's values, which may change later) or when it
// is first sent or replayed (a payload the SDK built and never changes: token deltas, hints,
// gate events). A detached process that nobody watches then never serialises those.
import { serializeWithinBudget } from './shrink.js';

/** Reports a frame cut to the payload budget, or one that could not be serialised. */
export type FrameWarn = (kind: string, message: string, error?: unknown) => void;

/** One event of the ring buffer. */
export class EventFrame {
  #text: string | null | undefined;
  #payload: unknown;

  private constructor(
    /** The envelope's `seq`. */
    readonly seq: number,
    /** The envelope's `ts` (ms since the epoch, taken at emit). */
    readonly ts: number,
    /** The envelope's `runId`. */
    readonly runId: string,
    /** The envelope's `type`. */
    readonly type: string,
    payload: unknown,
    private readonly warn: FrameWarn,
  ) {
    this.#payload = payload;
  }

  /** Serialised now: the payload holds values the host may change after the emit. Throws when it cannot be serialised. */
  static eager(seq: number, runId: string, type: string, payload: unknown, warn: FrameWarn): EventFrame {
    const frame = new EventFrame(seq, Date.now(), runId, type, undefined, warn);
    frame.#text = serializeWithinBudget(seq, frame.ts, runId, type, payload, (m) => warn(`shrink:${type}`, m));
    return frame;
  }

  /** Serialised on first use: the payload is the SDK's own and is never changed after the emit. */
  static owned(seq: number, runId: string, type: string, payload: unknown, warn: FrameWarn): EventFrame {
    return new EventFrame(seq, Date.now(), runId, type, payload, warn);
  }

  /** The frame's text, or `null` when it could not be serialised (warned once per kind). */
  text(): string | null {
    if (this.#text !== undefined) return this.#text;
    try {
      this.#text = serializeWithinBudget(this.seq, this.ts, this.runId, this.type, this.#payload, (m) => this.warn(`shrink:${this.type}`, m));
    } catch (error) {
      this.warn('emit', 'internal error while serialising an event; the event is lost', error);
      this.#text = null;
    }
    this.#payload = undefined;
    return this.#text;
  }
}
