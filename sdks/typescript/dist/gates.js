/** The shared decision of every fast path. */
export const CONTINUE = Object.freeze({ action: 'continue' });
/** Every present matcher field must match; absent ones match anything; `point` defaults to `before`. */
export function matcherMatches(m, point, node) {
    if ((m.point ?? 'before') !== point)
        return false;
    if (m.kind != null && m.kind !== node.kind)
        return false;
    return m.name == null || m.name === node.name;
}
function sameMatcher(a, b) {
    return (a.kind ?? null) === (b.kind ?? null) && (a.name ?? null) === (b.name ?? null) && (a.point ?? null) === (b.point ?? null);
}
/** Why an edited input does not fit the held one, or `null` when it does. */
export function shapeMismatch(original, edited) {
    const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
    return kind(original) === kind(edited) ? null : `expected ${kind(original)}, got ${kind(edited)}`;
}
/** Breakpoints, mode and held gates. */
export class GateEngine {
    breakpoints = [];
    mode = 'run';
    held = new Map();
    /** Adopts the viewer's whole debug state (`hello.ack`). */
    arm(breakpoints, mode) {
        this.breakpoints = Array.isArray(breakpoints) ? breakpoints.filter((m) => typeof m === 'object' && m !== null) : [];
        this.mode = mode === 'step' ? 'step' : 'run';
    }
    /** Forgets the viewer's state (on detach). */
    disarm() {
        this.breakpoints = [];
        this.mode = 'run';
    }
    /** `breakpoint.set`. */
    add(matcher) {
        if (!this.breakpoints.some((m) => sameMatcher(m, matcher)))
            this.breakpoints.push(matcher);
    }
    /** `breakpoint.clear`: removes by exact matcher equality. */
    remove(matcher) {
        this.breakpoints = this.breakpoints.filter((m) => !sameMatcher(m, matcher));
    }
    /** Why a gate at `point` of `node` holds, or `null` when it passes. */
    reason(point, node) {
        for (const m of this.breakpoints) {
            if (matcherMatches(m, point, node))
                return point === 'error' ? 'error' : 'breakpoint';
        }
        if (this.mode === 'step' && point !== 'after')
            return 'step';
        return null;
    }
}
