import type { BreakpointMatcher, NodeKind, PausePoint, PauseReason, ResumeAction, RunMode } from './protocol.js';
/** How a gate was released. `output` rides `inject`; `input` an edited input on `continue`. */
export interface Decision {
    readonly action: ResumeAction;
    readonly output?: unknown;
    readonly input?: unknown;
    readonly edited?: boolean;
}
/** The shared decision of every fast path. */
export declare const CONTINUE: Decision;
/** The logical node a gate belongs to. */
export interface GateNode {
    readonly nodeId: string;
    readonly kind: NodeKind;
    readonly name: string;
}
/** Every present matcher field must match; absent ones match anything; `point` defaults to `before`. */
export declare function matcherMatches(m: BreakpointMatcher, point: PausePoint, node: GateNode): boolean;
/** A held gate. */
export interface Held {
    readonly pauseId: string;
    readonly runId: string;
    readonly node: GateNode;
    readonly point: PausePoint;
    /** The input an edit must match in JSON type (editable gates only). */
    readonly input: unknown;
    readonly editable: boolean;
    readonly settle: (decision: Decision, resumed: Record<string, unknown>) => void;
}
/** Why an edited input does not fit the held one, or `null` when it does. */
export declare function shapeMismatch(original: unknown, edited: unknown): string | null;
/** Breakpoints, mode and held gates. */
export declare class GateEngine {
    breakpoints: BreakpointMatcher[];
    mode: RunMode;
    readonly held: Map<string, Held>;
    /** Adopts the viewer's whole debug state (`hello.ack`). */
    arm(breakpoints: unknown, mode: unknown): void;
    /** Forgets the viewer's state (on detach). */
    disarm(): void;
    /** `breakpoint.set`. */
    add(matcher: BreakpointMatcher): void;
    /** `breakpoint.clear`: removes by exact matcher equality. */
    remove(matcher: BreakpointMatcher): void;
    /** Why a gate at `point` of `node` holds, or `null` when it passes. */
    reason(point: PausePoint, node: GateNode): PauseReason | null;
}
