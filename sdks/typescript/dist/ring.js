/** A drop-oldest ring of events, addressed by absolute index (the count of pushes before). */
export class RingBuffer {
    capacity;
    #items;
    #end = 0;
    #size = 0;
    /** Events dropped to make room since the start. */
    dropped = 0;
    constructor(capacity) {
        this.capacity = capacity;
        this.#items = new Array(Math.max(1, capacity));
    }
    /** Events held now. */
    get size() {
        return this.#size;
    }
    /** The absolute index of the oldest event held. */
    get start() {
        return this.#end - this.#size;
    }
    /** The absolute index the next event will get. */
    get end() {
        return this.#end;
    }
    /** Adds an event, dropping the oldest when full. */
    push(frame) {
        const cap = this.#items.length;
        this.#items[this.#end % cap] = frame;
        this.#end += 1;
        if (this.#size < cap)
            this.#size += 1;
        else
            this.dropped += 1;
    }
    /** The event at absolute `index`, or `undefined` when it is not held (dropped or not yet pushed). */
    at(index) {
        if (index < this.start || index >= this.#end)
            return undefined;
        return this.#items[index % this.#items.length];
    }
}
