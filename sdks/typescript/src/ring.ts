// The replay ring buffer: the newest events, replayed oldest-first on every attach; while
// attached, the transport sends from it (a cursor), so it is also the bounded send queue.
import type { Frame } from './frame.js';

/** A drop-oldest ring of events, addressed by absolute index (the count of pushes before). */
export class RingBuffer {
  readonly #items: (Frame | undefined)[];
  #end = 0;
  #size = 0;
  /** Events dropped to make room since the start. */
  dropped = 0;

  constructor(readonly capacity: number) {
    this.#items = new Array<Frame | undefined>(Math.max(1, capacity));
  }

  /** Events held now. */
  get size(): number {
    return this.#size;
  }

  /** The absolute index of the oldest event held. */
  get start(): number {
    return this.#end - this.#size;
  }

  /** The absolute index the next event will get. */
  get end(): number {
    return this.#end;
  }

  /** Adds an event, dropping the oldest when full. */
  push(frame: Frame): void {
    const cap = this.#items.length;
    this.#items[this.#end % cap] = frame;
    this.#end += 1;
    if (this.#size < cap) this.#size += 1;
    else this.dropped += 1;
  }

  /** The event at absolute `index`, or `undefined` when it is not held (dropped or not yet pushed). */
  at(index: number): Frame | undefined {
    if (index < this.start || index >= this.#end) return undefined;
    return this.#items[index % this.#items.length];
  }
}
