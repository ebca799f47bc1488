import type { Frame } from './frame.js';
/** A drop-oldest ring of events, addressed by absolute index (the count of pushes before). */
export declare class RingBuffer {
    #private;
    readonly capacity: number;
    /** Events dropped to make room since the start. */
    dropped: number;
    constructor(capacity: number);
    /** Events held now. */
    get size(): number;
    /** The absolute index of the oldest event held. */
    get start(): number;
    /** The absolute index the next event will get. */
    get end(): number;
    /** Adds an event, dropping the oldest when full. */
    push(frame: Frame): void;
    /** The event at absolute `index`, or `undefined` when it is not held (dropped or not yet pushed). */
    at(index: number): Frame | undefined;
}
