import type { FrameWarn } from './frame.js';
/** A host value as JSON text taken at emit; `JSON.stringify` writes the value as it was then. */
export declare class Snapshot {
    /** The value's JSON text (`undefined`: the value has no JSON form). */
    readonly json: string | undefined;
    constructor(
    /** The value's JSON text (`undefined`: the value has no JSON form). */
    json: string | undefined);
    toJSON(): unknown;
}
/**
 * `value` as the event will show it: primitives as they are (immutable), anything else a
 * `Snapshot` of its JSON text now (cycles and BigInt written as far as they can be; a text
 * over the payload budget kept as a preview, as the budget would cut it, and `warn`ed). Never throws.
 */
export declare function snapshot(value: unknown, warn?: FrameWarn): unknown;
/** Copies `fields` into `into`, each value snapshotted (fields that have no JSON form left out). */
export declare function snapshotFields(fields: Record<string, unknown>, into: Record<string, unknown>, warn?: FrameWarn): void;
