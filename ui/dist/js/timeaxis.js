// The shared time axis of a task's overview and timeline: wall time, except that a long wait
// between two turns (the person reading and replying) is drawn short, as a break, so a session
// with an hour of replies still shows its turns' work. Positions are fractions in [0, 1].

/**
 * An axis over `turns` ([{start_time, end_time, duration_ms}] in order). A gap between turns
 * longer than GAP_CAP is drawn GAP_CAP long (a fixed cap, so a growing last turn moves no
 * earlier position). Returns { x(t), d(t), breaks: [{at, ms}], span } where `x` maps Unix ms
 * to [0, 1] and `d` to drawn ms (0 … span).
 */
export const GAP_CAP = 30_000;

export function timeAxis(turns) {
  const spans = turns
    .filter((t) => Number.isFinite(t.start_time))
    .map((t) => [t.start_time, Number.isFinite(t.end_time) ? t.end_time : t.start_time + Math.max(0, t.duration_ms || 0)]);
  if (!spans.length) return { x: () => 0, d: () => 0, breaks: [], span: 0 };
  const cap = GAP_CAP;
  // Stops: [wall time, drawn time] at each turn start and end.
  const stops = [];
  let drawn = 0;
  let last = spans[0][0];
  const breaks = [];
  for (const [a, b] of spans) {
    const gap = a - last;
    if (gap > cap) {
      drawn += cap;
      breaks.push({ wall: a, ms: gap });
    } else if (gap > 0) {
      drawn += gap;
    }
    if (a >= last) stops.push([a, drawn]);
    const end = Math.max(a, b);
    drawn += Math.max(0, end - Math.max(a, last));
    last = Math.max(last, end);
    stops.push([last, drawn]);
  }
  const total = Math.max(1, drawn);
  const d = (t) => {
    if (!Number.isFinite(t) || t <= stops[0][0]) return 0;
    // Binary search for the stop at or before t.
    let lo = 0;
    let hi = stops.length - 1;
    if (t >= stops[hi][0]) return stops[hi][1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (stops[mid][0] <= t) lo = mid; else hi = mid - 1;
    }
    const [w0, d0] = stops[lo];
    const [w1, d1] = stops[lo + 1];
    const f = w1 > w0 ? (t - w0) / (w1 - w0) : 0;
    return d0 + f * (d1 - d0);
  };
  const x = (t) => Math.min(1, d(t) / total);
  return { x, d, breaks: breaks.map((b) => ({ at: x(b.wall), ms: b.ms })), span: total };
}
