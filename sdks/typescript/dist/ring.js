// The replay ring buffer: the newest frames, replayed oldest-first on every attach.
/** A drop-oldest ring of serialised frames. */
export class RingBuffer {
    capacity;
    #items;
    #start = 0;
    #size = 0;
    /** Frames dropped to make room since the start. */
    dropped = 0;
    constructor(capacity) {
        this.capacity = capacity;
        this.#items = new Array(Math.max(1, capacity));
    }
    /** Frames held now. */
    get size() {
        return this.#size;
    }
    /** Adds a frame, dropping the oldest when full. */
    push(frame) {
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
    toArray() {
        const out = [];
        const cap = this.#items.length;
        for (let i = 0; i < this.#size; i++)
            out.push(this.#items[(this.#start + i) % cap]);
        return out;
    }
}
