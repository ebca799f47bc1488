/** `run.started`: a run begins. */
export interface RunStarted {
    /** The instrumented application's name. */
    app: string;
    /** The instrumentation library. */
    sdk: SdkInfo;
    /** Free-form run metadata (name, tags, …). */
    meta?: Record<string, unknown> | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** Name and version of the instrumentation library. */
export interface SdkInfo {
    /** Library name, e.g. `graphmind-ai` or `mindgate-sdk`. */
    name: string;
    /** Library version. */
    version: string;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `run.finished`: a run ends. */
export interface RunFinished {
    /** How it ended. */
    status: RunStatus;
    /** Why it failed, when it did. */
    error?: ErrorInfo | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** How a run ended. */
export type RunStatus = "ok" | "error" | "aborted";
/** An error as it travels on the wire. */
export interface ErrorInfo {
    /** Error class name, e.g. `ValueError`. */
    name: string;
    /** Human-readable message. */
    message: string;
    /** Stack trace, when the sender has one. */
    stack?: string | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `graph.hint`: static structure announced before it runs. */
export interface GraphHint {
    /** Nodes to draw greyed until they run. */
    nodes: Array<HintNode>;
    /** A gap marker, when events were dropped. */
    gap?: GapMarker | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** One node announced ahead of execution by `graph.hint`. */
export interface HintNode {
    /** Stable logical node id. */
    nodeId: string;
    /** Node kind. */
    kind: NodeKind;
    /** Display name. */
    name: string;
    /** Parent logical node, if any. */
    parentId?: string | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** What a node is. The extra kinds let LangChain-shaped runs and MCP servers render as themselves. */
export type NodeKind = "agent" | "llm" | "tool" | "chain" | "retriever" | "server" | "resource" | "prompt" | "custom";
/** Marks events a client dropped while detached (rides on a `graph.hint` with no nodes). */
export interface GapMarker {
    /** How many events were dropped. */
    droppedCount: number;
    /** First dropped `seq`. */
    fromSeq: number;
    /** Last dropped `seq`. */
    toSeq: number;
    /** Why they were dropped (e.g. `buffer-full`). */
    reason?: string | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `node.started`: one instance of a logical node begins. */
export interface NodeStarted {
    /** Stable logical node id (`tool:search`). */
    nodeId: string;
    /** Parent logical node, if any. */
    parentId?: string | null;
    /** Node kind. */
    kind: NodeKind;
    /** Display name. */
    name: string;
    /** Unique id of this execution. */
    instanceId: string;
    /** The node's input (any JSON). */
    input?: unknown;
    /** The sender folded this node's children. */
    collapsed?: boolean | null;
    /** What the sender redacted from the input. */
    redaction?: Redaction | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** How many values were redacted from an input. */
export interface Redaction {
    /** Number of redacted values. */
    count: number;
    /** The redacted keys (absent stays absent on re-serialisation). */
    keys?: Array<string> | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `node.token`: streamed model output. */
export interface NodeToken {
    /** Logical node id. */
    nodeId: string;
    /** Instance the deltas belong to, when the sender knows it. */
    instanceId?: string | null;
    /** The deltas, in order. */
    deltas: Array<TokenDelta>;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** One streamed piece of text. */
export interface TokenDelta {
    /** Channel. */
    t: TokenChannel;
    /** Text. */
    v: string;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** The channel of a streamed token delta. */
export type TokenChannel = "text" | "reasoning" | "tool-args";
/** `node.finished`: one instance ends. */
export interface NodeFinished {
    /** Logical node id. */
    nodeId: string;
    /** The instance that ended (always sent by well-behaved clients). */
    instanceId?: string | null;
    /** The node's output (any JSON). */
    output?: unknown;
    /** Token usage. */
    usage?: Usage | null;
    /** Wall time in ms, including time held at gates. */
    durationMs: number;
    /** How it ended. */
    status: NodeStatus;
    /** Time held at gates, in ms. */
    heldMs?: number | null;
    /** Why a model call stopped, as the provider said it (`stop`, `length`,
     * `tool-calls`, …; open-ended). */
    finishReason?: string | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** Token usage of a model call. */
export interface Usage {
    /** Prompt tokens. */
    inputTokens: number;
    /** Completion tokens. */
    outputTokens: number;
    /** The counts include children's usage. */
    inclusive?: boolean | null;
    /** Tokens read from a prompt cache. */
    cacheReadTokens?: number | null;
    /** Tokens written to a prompt cache. */
    cacheWriteTokens?: number | null;
    /** Reasoning tokens. */
    reasoningTokens?: number | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** How one node instance ended. */
export type NodeStatus = "ok" | "error" | "aborted";
/** `node.error`: an instance threw. */
export interface NodeError {
    /** Logical node id. */
    nodeId: string;
    /** The failing instance. */
    instanceId?: string | null;
    /** The error. */
    error: ErrorInfo;
    /** Time held at gates, in ms. */
    heldMs?: number | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `exec.paused`: a gate holds. */
export interface ExecPaused {
    /** Id of this hold, unique within the run. */
    pauseId: string;
    /** The held node. */
    nodeId: string;
    /** Where the gate sits. */
    point: PausePoint;
    /** Why it holds. */
    reason?: PauseReason | null;
    /** Loop-guard details. */
    loop?: LoopInfo | null;
    /** Rule details. */
    smart?: SmartInfo | null;
    /** The input may be edited on resume. */
    editable?: boolean | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** Where in a node's lifecycle a gate sits. */
export type PausePoint = "before" | "after" | "error";
/** Why a gate held. */
export type PauseReason = "breakpoint" | "error" | "step" | "loop";
/** Details of a loop-guard hold. */
export interface LoopInfo {
    /** How many identical calls in a row. */
    repeats: number;
    /** `seq` of the first call of the loop. */
    firstSeq: number;
    /** `seq` of the latest call. */
    lastSeq: number;
    /** Fingerprint of the repeated input. */
    fingerprint: string;
    /** `repeat`, `cycle` or `error-repeat`. */
    kind?: string | null;
    /** Cycle period. */
    period?: number | null;
    /** Cycle laps. */
    laps?: number | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** A rule-driven ("smart") hold. */
export interface SmartInfo {
    /** The rule that fired. */
    rule: string;
    /** Rule details (any JSON; a `null` is kept). */
    detail?: unknown;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `exec.resumed`: a gate was released (by the viewer or by the app itself). */
export interface ExecResumed {
    /** The released hold. */
    pauseId: string;
    /** How it was released. */
    action: ResumeAction;
    /** The edit applied, if any. */
    edited?: EditInfo | null;
    /** Echo of the request that released it. */
    requestId?: string | null;
    /** Who released it (any JSON; a `null` is kept). Mindgate's hub writes
     * `{"kind": …}` with a [`crate::principal`] kind when the app sent none. */
    principal?: unknown;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** How the viewer releases a held gate. */
export type ResumeAction = "continue" | "retry" | "inject" | "abort";
/** An edit applied on resume. */
export interface EditInfo {
    /** The value after the edit. */
    after: unknown;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `exec.refused`: the app refused a resume request. */
export interface ExecRefused {
    /** The hold the request was for. */
    pauseId: string;
    /** Why. */
    code: RefuseCode;
    /** Human-readable detail. */
    message?: string | null;
    /** Echo of the request. */
    requestId?: string | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** Why an app refused a resume. */
export type RefuseCode = "schema" | "shape" | "placeholder" | "truncated" | "disabled" | "unsupported";
/** `exec.resume` (viewer → app): release a held gate. */
export interface ExecResume {
    /** The hold to release. */
    pauseId: string;
    /** How. */
    action: ResumeAction;
    /** The value to use (inject only). */
    output?: unknown;
    /** An edited input (clients with `edit-input`). */
    input?: unknown;
    /** Correlates `exec.resumed` / `exec.refused`. */
    requestId?: string | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `breakpoint.set` / `breakpoint.clear` (viewer → app). */
export interface BreakpointChange {
    /** The matcher to add or remove. */
    matcher: BreakpointMatcher;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** A breakpoint: which nodes at which point should hold. */
export interface BreakpointMatcher {
    /** Match only nodes of this kind. */
    kind?: NodeKind | null;
    /** Match only nodes with this name. */
    name?: string | null;
    /** Gate point; `before` when absent. */
    point?: PausePoint | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `mode.set` (viewer → app). */
export interface ModeSet {
    /** The new mode. */
    mode: RunMode;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** Whether every node pauses (step) or only breakpoints do (run). */
export type RunMode = "run" | "step";
/** `hello` (app → viewer): the first frame of every connection. */
export interface Hello {
    /** Versions. */
    versions: ClientVersions;
    /** Capabilities (open-ended; unknown ones are ignored). */
    capabilities: Array<string>;
    /** Application name. */
    app?: string | null;
    /** Instrumentation library. */
    sdk?: SdkInfo | null;
    /** The `sessionToken` of an earlier `hello.ack`, proving run ownership on reconnect. */
    resumeToken?: string | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** Versions a client announces. */
export interface ClientVersions {
    /** Protocol major it speaks. */
    protocol: number;
    /** Client library version. */
    client: string;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** `hello.ack` (viewer → app): the viewer's whole desired debug state. */
export interface HelloAck {
    /** Versions. */
    versions: ViewerVersions;
    /** Capabilities. */
    capabilities: Array<string>;
    /** Current breakpoints. */
    breakpoints: Array<BreakpointMatcher>;
    /** Current mode. */
    mode: RunMode;
    /** Token the app echoes as `resumeToken` on reconnect. */
    sessionToken?: string | null;
    /** What this hub itself supports beyond relaying (open-ended, see
     * [`crate::hub_capability`]); absent from viewers that predate it. */
    hubCapabilities?: Array<string> | null;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** Versions a viewer announces. */
export interface ViewerVersions {
    /** Protocol major it speaks. */
    protocol: number;
    /** Viewer version. */
    viewer: string;
    /** Loose: unknown keys are kept. */
    [key: string]: unknown;
}
/** Every known envelope `type` and its payload. */
export interface PayloadByType {
    "run.started": RunStarted;
    "run.finished": RunFinished;
    "graph.hint": GraphHint;
    "node.started": NodeStarted;
    "node.token": NodeToken;
    "node.finished": NodeFinished;
    "node.error": NodeError;
    "exec.paused": ExecPaused;
    "exec.resumed": ExecResumed;
    "exec.refused": ExecRefused;
    "exec.resume": ExecResume;
    "breakpoint.set": BreakpointChange;
    "breakpoint.clear": BreakpointChange;
    "mode.set": ModeSet;
    "hello": Hello;
    "hello.ack": HelloAck;
}
/** The known envelope types, in schema order. */
export declare const MESSAGE_TYPES: readonly ["run.started", "run.finished", "graph.hint", "node.started", "node.token", "node.finished", "node.error", "exec.paused", "exec.resumed", "exec.refused", "exec.resume", "breakpoint.set", "breakpoint.clear", "mode.set", "hello", "hello.ack"];
