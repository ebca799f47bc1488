import type { ErrorInfo } from './protocol.generated.js';
/**
 * The reason a run's `AbortSignal` carries after the debugger's `abort`, and the error
 * the SDK throws at that gate. Named `AbortError`, so AI SDKs treat it as terminal
 * cancellation and never retry it.
 */
export declare class MindgateAbortError extends Error {
    name: string;
    constructor(message?: string);
}
/** True for Mindgate's abort and for any `AbortError`-named error (DOMException included). */
export declare function isAbortError(error: unknown): boolean;
/** Any thrown value as the wire's `ErrorInfo` (never throws). */
export declare function toErrorInfo(error: unknown): ErrorInfo;
