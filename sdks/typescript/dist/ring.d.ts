/** A drop-oldest ring of serialised frames. */
export declare class RingBuffer {
    #private;
    readonly capacity: number;
    /** Frames dropped to make room since the start. */
    dropped: number;
    constructor(capacity: number);
    /** Frames held now. */
    get size(): number;
    /** Adds a frame, dropping the oldest when full. */
    push(frame: string): void;
    /** The frames, oldest first. */
    toArray(): string[];
}
