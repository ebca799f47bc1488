import { type Usage } from './node.js';
import type { Session } from './session.js';
/** The logical node of every model step. */
export declare const STEP_NODE_ID = "llm:step";
/** Options of the adapter. */
export interface AdapterOptions {
    /** Another session than the process's. */
    session?: Session;
}
/** A language model as the middleware sees it (LanguageModelV2 or V3). */
export interface ModelLike {
    readonly specificationVersion?: string;
    readonly provider?: string;
    readonly modelId?: string;
}
/** What `wrapLanguageModel` hands `wrapGenerate` / `wrapStream`. */
export interface WrapOptions {
    doGenerate: () => PromiseLike<any>;
    doStream: () => PromiseLike<any>;
    params: any;
    model: ModelLike;
}
/** A `LanguageModelMiddleware` of `ai` v6 (`specificationVersion: 'v3'`) and v5 (`middlewareVersion: 'v2'`). */
export interface MindgateMiddleware {
    readonly specificationVersion: 'v3';
    readonly middlewareVersion: 'v2';
    wrapGenerate?: (options: WrapOptions) => Promise<any>;
    wrapStream?: (options: WrapOptions) => Promise<any>;
}
/**
 * The middleware for `wrapLanguageModel({ model, middleware: mindgateMiddleware() })`. Each
 * model step becomes one execution of `llm:step` (instance `<runId>:s<N>`): model, usage,
 * finish reason and streamed deltas; the first step announces the tool roster. Gates: before
 * the provider is called (inject answers with the viewer's text instead), on a provider error
 * (retry calls it again) and, for `generateText`, after the answer. Disabled: a middleware that
 * wraps nothing.
 */
export declare function mindgateMiddleware(options?: AdapterOptions): MindgateMiddleware;
/** Wire usage from a V3 (`{inputTokens: {total, cacheRead…}}`) or V2 (`{inputTokens: n}`) usage. */
export declare function usageOf(usage: any): Usage | undefined;
/**
 * Wraps the `execute` of every tool in a tool set: each call is one execution of
 * `tool:<name>` with the call id as its instance. Gates: before `execute` (inject returns the
 * viewer's value to the model; continue may carry edited arguments), on a thrown error (retry
 * runs it again, inject answers instead), after it. Tools without `execute` and streaming
 * (async generator) tools pass through. Disabled: returns `tools` itself.
 */
export declare function mindgateTools<T extends Record<string, any>>(tools: T, options?: AdapterOptions): T;
