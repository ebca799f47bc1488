// The payload budget: a payload over 512 KB has its biggest fields replaced by a preview.
/** The protocol's payload budget (UTF-16 code units here, a cheap upper bound on bytes/3). */
export const MAX_PAYLOAD_CHARS = 512 * 1024;
/** Characters of a cut field's preview. */
export const PREVIEW_CHARS = 2000;
/** The payload's JSON text (`undefined` for `undefined`); cycles, BigInt and throwing getters written as far as they can be. */
export function safeStringify(payload) {
    try {
        return JSON.stringify(payload);
    }
    catch {
        const seen = new WeakSet();
        return JSON.stringify(payload, (_key, value) => {
            if (typeof value === 'bigint')
                return value.toString();
            if (typeof value === 'object' && value !== null) {
                if (seen.has(value))
                    return '[Circular]';
                seen.add(value);
            }
            return value;
        });
    }
}
/**
 * The JSON text of one event's payload, held to the budget (`undefined` for an `undefined`
 * payload). Never throws for a JSON-able payload.
 */
export function payloadWithinBudget(type, payload, warn) {
    const body = safeStringify(payload);
    if (body === undefined || body.length <= MAX_PAYLOAD_CHARS || typeof payload !== 'object' || payload === null)
        return body;
    const shrunk = { ...payload };
    for (const key of ['input', 'output']) {
        if (!(key in shrunk))
            continue;
        const text = JSON.stringify(shrunk[key]) ?? '';
        if (text.length > PREVIEW_CHARS * 4) {
            shrunk[key] = { _mindgateTruncated: true, chars: text.length, preview: text.slice(0, PREVIEW_CHARS) };
        }
    }
    warn(`a ${type} payload of ${body.length} characters was over the 512 KB budget; its large fields were cut to a preview`);
    return safeStringify(shrunk);
}
