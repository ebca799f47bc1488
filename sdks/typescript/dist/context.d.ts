import { AsyncLocalStorage } from 'node:async_hooks';
/** One top-level agent invocation: what `run(name, fn)` hands `fn`. */
export declare class RunContext {
    #private;
    /** The run's id (`run_…`). */
    readonly runId: string;
    /** The run's name (its agent node is `agent:<name>`). */
    readonly name: string;
    /** Model steps started in this run (the adapter's step instance ids). */
    steps: number;
    /** Messages in the prompt of the run's previous model step (the adapter sends only new ones). */
    promptLength: number;
    /** Tool names already announced by `graph.hint`. */
    readonly hinted: Set<string>;
    /** The tool roster of the last step that checked it (the adapter announces only a changed one). */
    roster: readonly string[] | null;
    constructor(
    /** The run's id (`run_…`). */
    runId: string, 
    /** The run's name (its agent node is `agent:<name>`). */
    name: string);
    /** Aborted by the debugger's `abort` (or by `abort()`): pass it to `generateText({abortSignal})` and your own I/O. */
    get signal(): AbortSignal;
    /** The run was aborted. */
    get aborted(): boolean;
    /** Aborts the run with an `AbortError`-named reason (idempotent). */
    abort(reason?: unknown): void;
    /** The abort reason to throw (a `MindgateAbortError` unless the host aborted with its own). */
    abortReason(): unknown;
}
/** What the async context carries: the run and the node that encloses new nodes. */
export interface Scope {
    readonly run: RunContext;
    readonly parentId: string;
}
/** The one store of the process (shared by every session: runs are the host's). */
export declare const scopes: AsyncLocalStorage<Scope>;
/** The current run, if any. */
export declare function currentRun(): RunContext | undefined;
