// Runs and the current node, kept by AsyncLocalStorage across awaits and callbacks.
import { AsyncLocalStorage } from 'node:async_hooks';
import { MindgateAbortError } from './errors.js';
/** One top-level agent invocation: what `run(name, fn)` hands `fn`. */
export class RunContext {
    runId;
    name;
    #controller = new AbortController();
    /** `#controller` aborted (only `abort` aborts it): read on every model step, cheaper than the signal's getter. */
    #aborted = false;
    /** Model steps started in this run (the adapter's step instance ids). */
    steps = 0;
    /** Messages in the prompt of the run's previous model step (the adapter sends only new ones). */
    promptLength = 0;
    /** Tool names already announced by `graph.hint`. */
    hinted = new Set();
    /** The tool roster of the last step that checked it (the adapter announces only a changed one). */
    roster = null;
    constructor(
    /** The run's id (`run_…`). */
    runId, 
    /** The run's name (its agent node is `agent:<name>`). */
    name) {
        this.runId = runId;
        this.name = name;
    }
    /** Aborted by the debugger's `abort` (or by `abort()`): pass it to `generateText({abortSignal})` and your own I/O. */
    get signal() {
        return this.#controller.signal;
    }
    /** The run was aborted. */
    get aborted() {
        return this.#aborted;
    }
    /** Aborts the run with an `AbortError`-named reason (idempotent). */
    abort(reason = new MindgateAbortError()) {
        if (this.#aborted)
            return;
        this.#aborted = true;
        this.#controller.abort(reason);
    }
    /** The abort reason to throw (a `MindgateAbortError` unless the host aborted with its own). */
    abortReason() {
        return this.#controller.signal.aborted ? this.#controller.signal.reason : new MindgateAbortError();
    }
}
/** The one store of the process (shared by every session: runs are the host's). */
export const scopes = new AsyncLocalStorage();
/** The current run, if any. */
export function currentRun() {
    return scopes.getStore()?.run;
}
