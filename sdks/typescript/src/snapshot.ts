// Snapshots of the host's values: a value the host may change after an event is emitted is
// serialised when it is taken (its JSON text, held to the payload budget) and written out as
// it was then when the event is sent. Only the host's values are serialised at emit (a
// tool's input and output, a model step's new messages); the SDK's own fields and the
// envelope around them are written when the event is first sent or replayed, so a detached
// process that nobody watches serialises only the host's values. A value whose `toJSON`
// throws is shown as a marker naming the error (warned once; the rest of the event flows).
import type { FrameWarn } from './frame.js';
import { MAX_PAYLOAD_CHARS, PREVIEW_CHARS, safeStringify } from './shrink.js';

/** A host value as JSON text taken at emit; `JSON.stringify` writes the value as it was then. */
export class Snapshot {
  constructor(
    /** The value's JSON text (`undefined`: the value has no JSON form). */
    readonly json: string | undefined,
  ) {}

  toJSON(): unknown {
    return this.json === undefined ? undefined : JSON.parse(this.json);
  }
}

/**
 * `value` as the event will show it: primitives as they are (immutable), anything else a
 * `Snapshot` of its JSON text now (cycles and BigInt written as far as they can be; a text
 * over the payload budget kept as a preview, as the budget would cut it, and `warn`ed). Never throws.
 */
export function snapshot(value: unknown, warn?: FrameWarn): unknown {
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
  if (value === null) return null;
  let json: string | undefined;
  try {
    json = safeStringify(value);
  } catch (error) {
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
export function snapshotFields(fields: Record<string, unknown>, into: Record<string, unknown>, warn?: FrameWarn): void {
  for (const key in fields) {
    const v = snapshot(fields[key], warn);
    if (v !== undefined) into[key] = v;
  }
}
