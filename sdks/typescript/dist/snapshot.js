import { MAX_PAYLOAD_CHARS, PREVIEW_CHARS, safeStringify } from './shrink.js';
/** A host value as JSON text taken at emit; `JSON.stringify` writes the value as it was then. */
export class Snapshot {
    json;
    constructor(
    /** The value's JSON text (`undefined`: the value has no JSON form). */
    json) {
        this.json = json;
    }
    toJSON() {
        return this.json === undefined ? undefined : JSON.parse(this.json);
    }
}
/**
 * `value` as the event will show it: primitives as they are (immutable), anything else a
 * `Snapshot` of its JSON text now (cycles and BigInt written as far as they can be; a text
 * over the payload budget kept as a preview, as the budget would cut it, and `warn`ed). Never throws.
 */
export function snapshot(value, warn) {
    switch (typeof value) {
        case 'string':
        case 'number':
        case 'boolean':
        case 'undefined':
            return value;
        case 'bigint':
            return value.toString();
        case 'function':
        case 'symbol':
            return undefined;
        default:
    }
    if (value === null)
        return null;
    let json;
    try {
        json = safeStringify(value);
    }
    catch (error) {
        // A throwing toJSON or getter: the event still flows, the value shown as a marker.
        const reason = error instanceof Error ? error.message : String(error);
        warn?.('snapshot:unserialisable', `a value could not be serialised (${reason}); it is shown as a marker`, error);
        json = JSON.stringify({ _mindgateUnserialisable: true, reason: reason.slice(0, PREVIEW_CHARS) });
    }
    if (json !== undefined && json.length > MAX_PAYLOAD_CHARS) {
        warn?.('shrink:snapshot', `a value of ${json.length} characters was over the 512 KB budget; it was cut to a preview`);
        json = JSON.stringify({ _mindgateTruncated: true, chars: json.length, preview: json.slice(0, PREVIEW_CHARS) });
    }
    return new Snapshot(json);
}
/** Copies `fields` into `into`, each value snapshotted (fields that have no JSON form left out). */
export function snapshotFields(fields, into, warn) {
    for (const key in fields) {
        const v = snapshot(fields[key], warn);
        if (v !== undefined)
            into[key] = v;
    }
}
