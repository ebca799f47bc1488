// The payload budget: a frame over 512 KB has its biggest fields replaced by a preview.
import { envelopeText } from './protocol.js';

/** The protocol's payload budget (UTF-16 code units here, a cheap upper bound on bytes/3). */
export const MAX_PAYLOAD_CHARS = 512 * 1024;
const PREVIEW_CHARS = 2000;

function safeSerialize(seq: number, ts: number, runId: string, type: string, payload: unknown): string {
  try {
    return envelopeText(seq, ts, runId, type, payload);
  } catch {
    // Cycles, BigInt, throwing getters: write what can be written.
    const seen = new WeakSet<object>();
    const text = JSON.stringify(payload, (_key, value: unknown) => {
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'object' && value !== null) {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      return value;
    });
    return envelopeText(seq, ts, runId, type, JSON.parse(text ?? 'null'));
  }
}

/** The frame of one event, its payload held to the budget. Never throws for a JSON-able payload. */
export function serializeWithinBudget(seq: number, ts: number, runId: string, type: string, payload: unknown, warn: (m: string) => void): string {
  const frame = safeSerialize(seq, ts, runId, type, payload);
  if (frame.length <= MAX_PAYLOAD_CHARS || typeof payload !== 'object' || payload === null) return frame;
  const shrunk: Record<string, unknown> = { ...(payload as Record<string, unknown>) };
  for (const key of ['input', 'output']) {
    if (!(key in shrunk)) continue;
    const text = JSON.stringify(shrunk[key]) ?? '';
    if (text.length > PREVIEW_CHARS * 4) {
      shrunk[key] = { _mindgateTruncated: true, chars: text.length, preview: text.slice(0, PREVIEW_CHARS) };
    }
  }
  warn(`a ${type} payload of ${frame.length} characters was over the 512 KB budget; its large fields were cut to a preview`);
  return safeSerialize(seq, ts, runId, type, shrunk);
}
