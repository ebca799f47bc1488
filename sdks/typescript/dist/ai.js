// The Vercel AI SDK adapter (`ai` v5 and v6): a language-model middleware for
// `wrapLanguageModel` (each model step an `llm` node, held before the provider is called) and
// `mindgateTools` (each tool call a `tool` node, held before its `execute`). It uses only the
// `ai` package's documented extension points and imports nothing from it at run time.
import { scopes } from './context.js';
import { isAbortError } from './errors.js';
import { session as processSession } from './index.js';
import { executeNode, executeNodeIn } from './node.js';
import { snapshot } from './snapshot.js';
/** The logical node of every model step. */
export const STEP_NODE_ID = 'llm:step';
/**
 * The middleware for `wrapLanguageModel({ model, middleware: mindgateMiddleware() })`. Each
 * model step becomes one execution of `llm:step` (instance `<runId>:s<N>`): model, usage,
 * finish reason and streamed deltas; the first step announces the tool roster. Gates: before
 * the provider is called (inject answers with the viewer's text instead), on a provider error
 * (retry calls it again) and, for `generateText`, after the answer. Disabled: a middleware that
 * wraps nothing.
 */
export function mindgateMiddleware(options = {}) {
    const base = { specificationVersion: 'v3', middlewareVersion: 'v2' };
    if (!(options.session ?? processSession()).enabled)
        return base;
    return {
        ...base,
        wrapGenerate: (o) => modelStep(options, o.params, o.model, o.doGenerate, false),
        wrapStream: (o) => modelStep(options, o.params, o.model, o.doStream, true),
    };
}
// Not `async`: one promise less per step (each one costs Node 20's AsyncLocalStorage hooks).
function modelStep(options, params, model, call, stream) {
    const s = options.session ?? processSession();
    if (!s.live)
        return Promise.resolve(call());
    const scope = scopes.getStore();
    const run = scope?.run ?? s.implicitRun();
    // An abort is terminal: after the debugger aborted the run, no further step reaches the provider.
    if (run.aborted && isAbortError(run.signal.reason))
        return Promise.reject(run.signal.reason);
    const tools = toolNames(params);
    announce(s, run, scope?.parentId, tools);
    run.steps += 1;
    const instanceId = `${run.runId}:s${run.steps}`;
    const v3 = model?.specificationVersion !== 'v2';
    const input = stepInput(run, params?.prompt, s.warnFrame);
    if (tools.length > 0)
        input.tools = tools;
    const spec = { kind: 'llm', name: 'step', nodeId: STEP_NODE_ID, instanceId, input, inputSnapshot: input, started: model?.modelId ? { model: model.modelId } : undefined };
    const adapter = stream ? streamAdapter(s, run, instanceId, v3) : v3 ? GENERATE_V3 : GENERATE_V2;
    return executeNodeIn(s, scope, spec, () => call(), adapter); // the provider call takes no arguments
}
/**
 * A step's input: the whole prompt on a run's first step, then only the messages added since
 * the previous step (`previousMessages` says how many came before), so a long tool loop costs
 * linear, not quadratic, serialisation and buffer memory. The messages are snapshotted now
 * (`snapshot.ts`: one JSON text, kept as one string in the ring buffer); the fields around
 * them are written when the event is first sent.
 */
function stepInput(run, prompt, warn) {
    if (!Array.isArray(prompt))
        return { prompt: snapshot(prompt, warn) };
    const before = run.promptLength;
    run.promptLength = prompt.length;
    if (before > 0 && prompt.length > before)
        return { messages: snapshot(prompt.slice(before), warn), previousMessages: before };
    return { prompt: snapshot(prompt, warn) };
}
function toolNames(params) {
    const tools = params?.tools;
    const names = [];
    if (!Array.isArray(tools))
        return names;
    for (const t of tools) {
        const name = t?.name;
        if (typeof name === 'string')
            names.push(name);
    }
    return names;
}
/** `graph.hint` with the step node and the tools not announced yet in this run. */
function announce(s, run, parentId, tools) {
    // The common case, every step after the first: the same roster as the last announced one.
    if (run.roster !== null && sameNames(run.roster, tools))
        return;
    run.roster = tools;
    const nodes = [];
    const parent = parentId !== undefined ? { parentId } : {};
    if (!run.hinted.has(STEP_NODE_ID)) {
        run.hinted.add(STEP_NODE_ID);
        nodes.push({ nodeId: STEP_NODE_ID, kind: 'llm', name: 'step', ...parent });
    }
    for (const name of tools) {
        const nodeId = `tool:${name}`;
        if (run.hinted.has(nodeId))
            continue;
        run.hinted.add(nodeId);
        nodes.push({ nodeId, kind: 'tool', name, ...parent });
    }
    if (nodes.length > 0)
        s.emitOwned(run.runId, 'graph.hint', { nodes });
}
function sameNames(a, b) {
    if (a.length !== b.length)
        return false;
    for (let i = 0; i < a.length; i++)
        if (a[i] !== b[i])
            return false;
    return true;
}
function count(value) {
    if (typeof value === 'number')
        return value;
    if (typeof value === 'object' && value !== null && typeof value.total === 'number')
        return value.total;
    return undefined;
}
/** Wire usage from a V3 (`{inputTokens: {total, cacheRead…}}`) or V2 (`{inputTokens: n}`) usage. */
export function usageOf(usage) {
    if (typeof usage !== 'object' || usage === null)
        return undefined;
    const inputTokens = count(usage.inputTokens);
    const outputTokens = count(usage.outputTokens);
    if (inputTokens === undefined && outputTokens === undefined)
        return undefined;
    const out = { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 };
    const cacheRead = usage.inputTokens?.cacheRead ?? usage.cachedInputTokens;
    const cacheWrite = usage.inputTokens?.cacheWrite;
    const reasoning = usage.outputTokens?.reasoning ?? usage.reasoningTokens;
    if (typeof cacheRead === 'number')
        out.cacheReadTokens = cacheRead;
    if (typeof cacheWrite === 'number')
        out.cacheWriteTokens = cacheWrite;
    if (typeof reasoning === 'number')
        out.reasoningTokens = reasoning;
    return out;
}
function finishReasonOf(reason) {
    if (typeof reason === 'string')
        return reason;
    if (typeof reason === 'object' && reason !== null)
        return reason.unified ?? reason.raw;
    return undefined;
}
function parseArgs(input) {
    if (typeof input !== 'string')
        return input;
    try {
        return JSON.parse(input);
    }
    catch {
        return input;
    }
}
/**
 * A tool call's arguments as the model wrote them (JSON text), parsed for display only when
 * the event is serialised: a detached process that nobody watches never parses them.
 */
class ToolArgs {
    text;
    constructor(text) {
        this.text = text;
    }
    toJSON() {
        return parseArgs(this.text);
    }
}
/** A tool call as a step's output shows it (the call's strings only, never the host's objects). */
function toolCallOf(part) {
    const input = part.input;
    return { toolCallId: part.toolCallId, toolName: part.toolName, input: typeof input === 'string' ? new ToolArgs(input) : input };
}
function finished(usage, reason, modelId) {
    const extra = {};
    const u = usageOf(usage);
    if (u)
        extra.usage = u;
    const r = finishReasonOf(reason);
    if (r)
        extra.finishReason = r;
    if (typeof modelId === 'string')
        extra.model = modelId;
    return extra;
}
function injectedText(value) {
    return typeof value === 'string' ? value : JSON.stringify(value);
}
function zeroUsage(v3) {
    return v3
        ? { inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 0, text: 0, reasoning: undefined } }
        : { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
}
function stopReason(v3) {
    return v3 ? { unified: 'stop', raw: 'stop' } : 'stop';
}
/** A generate result's output: its text and its tool calls, in one pass over its content. */
function generateOutput(result) {
    const content = result?.content;
    let text = '';
    let toolCalls;
    if (Array.isArray(content)) {
        for (const p of content) {
            if (p?.type === 'text')
                text += p.text ?? '';
            else if (p?.type === 'tool-call')
                (toolCalls ??= []).push(toolCallOf(p));
        }
    }
    return toolCalls !== undefined ? { text, toolCalls } : { text };
}
/** The adapter of every `generateText` step (it keeps no per-step state). */
const GENERATE_V3 = generateAdapter(true);
const GENERATE_V2 = generateAdapter(false);
function generateAdapter(v3) {
    return {
        ownsOutput: true,
        outputOf: generateOutput,
        finishedOf: (result) => finished(result?.usage, result?.finishReason, result?.response?.modelId),
        // The viewer's value answers the step: a whole generate result as is, else its text.
        fromInjected: (value) => typeof value === 'object' && value !== null && Array.isArray(value.content)
            ? value
            : { content: [{ type: 'text', text: injectedText(value) }], finishReason: stopReason(v3), usage: zeroUsage(v3), warnings: [] },
    };
}
function streamAdapter(s, run, instanceId, v3) {
    return {
        ownsOutput: true,
        afterGate: false,
        fromInjected: (value) => {
            const parts = [
                { type: 'stream-start', warnings: [] },
                { type: 'text-start', id: 'mindgate' },
                { type: 'text-delta', id: 'mindgate', delta: injectedText(value) },
                { type: 'text-end', id: 'mindgate' },
                { type: 'finish', finishReason: stopReason(v3), usage: zeroUsage(v3) },
            ];
            return { stream: new ReadableStream({ start: (c) => { for (const p of parts)
                        c.enqueue(p); c.close(); } }) };
        },
        streaming: (result, end) => ({ ...result, stream: observe(s, run, instanceId, result.stream, end) }),
    };
}
/** The provider's stream, passed through unchanged while its deltas become `node.token`s. */
function observe(s, run, instanceId, source, end) {
    const reader = source.getReader();
    let text = '';
    const toolCalls = [];
    let extra = {};
    let modelId;
    let streamError;
    const token = (channel, v) => {
        if (typeof v === 'string')
            s.token(run.runId, STEP_NODE_ID, instanceId, channel, v);
    };
    const see = (part) => {
        try {
            switch (part?.type) {
                case 'text-delta':
                    text += part.delta ?? '';
                    token('text', part.delta);
                    break;
                case 'reasoning-delta':
                    token('reasoning', part.delta);
                    break;
                case 'tool-input-delta':
                    token('tool-args', part.delta);
                    break;
                case 'tool-call':
                    toolCalls.push(toolCallOf(part));
                    break;
                case 'response-metadata':
                    modelId = part.modelId ?? modelId;
                    break;
                case 'finish':
                    extra = finished(part.usage, part.finishReason, modelId);
                    break;
                case 'error':
                    streamError = part.error;
                    break;
                default:
            }
        }
        catch {
            // Observing must never disturb the stream.
        }
    };
    const output = () => (toolCalls.length > 0 ? { text, toolCalls } : { text });
    return new ReadableStream({
        async pull(controller) {
            let next;
            try {
                next = await reader.read();
            }
            catch (error) {
                end('error', output(), extra, error);
                controller.error(error);
                return;
            }
            if (next.done) {
                if (streamError !== undefined)
                    end('error', output(), extra, streamError);
                else
                    end('ok', output(), extra);
                controller.close();
                return;
            }
            see(next.value);
            controller.enqueue(next.value);
        },
        cancel(reason) {
            end('ok', output(), { ...extra, cancelled: true });
            return reader.cancel(reason);
        },
    });
}
/**
 * Wraps the `execute` of every tool in a tool set: each call is one execution of
 * `tool:<name>` with the call id as its instance. Gates: before `execute` (inject returns the
 * viewer's value to the model; continue may carry edited arguments), on a thrown error (retry
 * runs it again, inject answers instead), after it. Tools without `execute` and streaming
 * (async generator) tools pass through. Disabled: returns `tools` itself.
 */
export function mindgateTools(tools, options = {}) {
    if (!(options.session ?? processSession()).enabled)
        return tools;
    const out = {};
    for (const [name, t] of Object.entries(tools)) {
        const execute = t?.execute;
        if (typeof execute !== 'function' || execute.constructor?.name === 'AsyncGeneratorFunction') {
            out[name] = t;
            continue;
        }
        out[name] = {
            ...t,
            execute(input, callOptions) {
                const s = options.session ?? processSession();
                if (!s.live)
                    return execute.call(t, input, callOptions);
                const toolCallId = callOptions?.toolCallId;
                const spec = {
                    kind: 'tool',
                    name,
                    nodeId: `tool:${name}`,
                    instanceId: typeof toolCallId === 'string' ? toolCallId : undefined,
                    input,
                    editable: true,
                    started: typeof toolCallId === 'string' ? { toolCallId } : undefined,
                };
                return executeNode(s, spec, (edited) => execute.call(t, edited, callOptions));
            },
        };
    }
    return out;
}
