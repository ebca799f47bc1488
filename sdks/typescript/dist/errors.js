/**
 * The reason a run's `AbortSignal` carries after the debugger's `abort`, and the error
 * the SDK throws at that gate. Named `AbortError`, so AI SDKs treat it as terminal
 * cancellation and never retry it.
 */
export class MindgateAbortError extends Error {
    name = 'AbortError';
    constructor(message = 'Run aborted by the Mindgate debugger') {
        super(message);
    }
}
/** True for Mindgate's abort and for any `AbortError`-named error (DOMException included). */
export function isAbortError(error) {
    if (error instanceof MindgateAbortError)
        return true;
    if (typeof error !== 'object' || error === null)
        return false;
    const name = error.name;
    return name === 'AbortError' || name === 'MindgateAbortError';
}
/** Any thrown value as the wire's `ErrorInfo` (never throws). */
export function toErrorInfo(error) {
    try {
        if (error instanceof Error) {
            const info = { name: error.name || 'Error', message: String(error.message) };
            if (typeof error.stack === 'string')
                info.stack = error.stack.slice(0, 4096);
            return info;
        }
        return { name: 'Error', message: String(error) };
    }
    catch {
        return { name: 'Error', message: 'unprintable error' };
    }
}
