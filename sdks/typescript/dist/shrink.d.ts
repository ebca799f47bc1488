/** The protocol's payload budget (UTF-16 code units here, a cheap upper bound on bytes/3). */
export declare const MAX_PAYLOAD_CHARS: number;
/** Characters of a cut field's preview. */
export declare const PREVIEW_CHARS = 2000;
/** The payload's JSON text (`undefined` for `undefined`); cycles, BigInt and throwing getters written as far as they can be. */
export declare function safeStringify(payload: unknown): string | undefined;
/**
 * The JSON text of one event's payload, held to the budget (`undefined` for an `undefined`
 * payload). Never throws for a JSON-able payload.
 */
export declare function payloadWithinBudget(type: string, payload: unknown, warn: (m: string) => void): string | undefined;
