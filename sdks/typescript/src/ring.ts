// The replay ring buffer: the newest frames, replayed oldest-first on every attach.

/** A drop-oldest ring of serialised frames. */
export class RingBuffer {
  readonly #items: (string | undefined)[];
  #start = 0;
  #size = 0;
  /** Frames dropped to make room since the start. */
  dropped = 0;

  constructor(readonly capacity: number) {
    this.#items = new Array<string | undefined>(Math.max(1, capacity));
  }

  /** Frames held now. */
  get size(): number {
    return this.#size;
  }

  /** Adds a frame, dropping the oldest when full. */
  push(frame: string): void {
    const cap = this.#items.length;
    if (this.#size < cap) {
      this.#items[(this.#start + this.#size) % cap] = frame;
      this.#size += 1;
      return;
    }
    this.#items[this.#start] = frame;
    this.#start = (this.#start + 1) % cap;
    this.dropped += 1;
  }

  /** The frames, oldest first. */
  toArray(): string[] {
    const out: string[] = [];
    const cap = this.#items.length;
    for (let i = 0; i < this.#size; i++) out.push(this.#items[(this.#start + i) % cap] as string);
    return out;
  }
}
