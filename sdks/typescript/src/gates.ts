// Gate bookkeeping: the viewer's debug state (breakpoints, mode) and the held gates.
import type { BreakpointMatcher, NodeKind, PausePoint, PauseReason, ResumeAction, RunMode } from './protocol.js';

/** How a gate was released. `output` rides `inject`; `input` an edited input on `continue`. */
export interface Decision {
  readonly action: ResumeAction;
  readonly output?: unknown;
  readonly input?: unknown;
  readonly edited?: boolean;
}

/** The shared decision of every fast path. */
export const CONTINUE: Decision = Object.freeze({ action: 'continue' });

/** The logical node a gate belongs to. */
export interface GateNode {
  readonly nodeId: string;
  readonly kind: NodeKind;
  readonly name: string;
}

/** Every present matcher field must match; absent ones match anything; `point` defaults to `before`. */
export function matcherMatches(m: BreakpointMatcher, point: PausePoint, node: GateNode): boolean {
  if ((m.point ?? 'before') !== point) return false;
  if (m.kind != null && m.kind !== node.kind) return false;
  return m.name == null || m.name === node.name;
}

function sameMatcher(a: BreakpointMatcher, b: BreakpointMatcher): boolean {
  return (a.kind ?? null) === (b.kind ?? null) && (a.name ?? null) === (b.name ?? null) && (a.point ?? null) === (b.point ?? null);
}

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
export function shapeMismatch(original: unknown, edited: unknown): string | null {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  return kind(original) === kind(edited) ? null : `expected ${kind(original)}, got ${kind(edited)}`;
}

/** Breakpoints, mode and held gates. */
export class GateEngine {
  breakpoints: BreakpointMatcher[] = [];
  mode: RunMode = 'run';
  readonly held = new Map<string, Held>();

  /** Adopts the viewer's whole debug state (`hello.ack`). */
  arm(breakpoints: unknown, mode: unknown): void {
    this.breakpoints = Array.isArray(breakpoints) ? breakpoints.filter((m) => typeof m === 'object' && m !== null) : [];
    this.mode = mode === 'step' ? 'step' : 'run';
  }

  /** Forgets the viewer's state (on detach). */
  disarm(): void {
    this.breakpoints = [];
    this.mode = 'run';
  }

  /** `breakpoint.set`. */
  add(matcher: BreakpointMatcher): void {
    if (!this.breakpoints.some((m) => sameMatcher(m, matcher))) this.breakpoints.push(matcher);
  }

  /** `breakpoint.clear`: removes by exact matcher equality. */
  remove(matcher: BreakpointMatcher): void {
    this.breakpoints = this.breakpoints.filter((m) => !sameMatcher(m, matcher));
  }

  /** Why a gate at `point` of `node` holds, or `null` when it passes. */
  reason(point: PausePoint, node: GateNode): PauseReason | null {
    for (const m of this.breakpoints) {
      if (matcherMatches(m, point, node)) return point === 'error' ? 'error' : 'breakpoint';
    }
    if (this.mode === 'step' && point !== 'after') return 'step';
    return null;
  }
}
