/** The protocol's payload budget (UTF-16 code units here, a cheap upper bound on bytes/3). */
export declare const MAX_PAYLOAD_CHARS: number;
/** The frame of one event, its payload held to the budget. Never throws for a JSON-able payload. */
export declare function serializeWithinBudget(seq: number, ts: number, runId: string, type: string, payload: unknown, warn: (m: string) => void): string;
