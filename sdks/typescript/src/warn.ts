// One warning per key per interval: the SDK's only voice when it degrades.

/** Where warnings go (default `console.warn`). */
export type WarnSink = (message: string) => void;

/** Rate-limited warnings; never throws. */
export class Warner {
  readonly #last = new Map<string, number>();
  constructor(
    private readonly intervalMs: number,
    private readonly sink: WarnSink,
  ) {}

  /** Warns about `key` unless it was warned about within the interval. */
  warn(key: string, message: string, error?: unknown): void {
    try {
      const now = Date.now();
      const last = this.#last.get(key);
      if (last !== undefined && now - last < this.intervalMs) return;
      this.#last.set(key, now);
      const detail = error instanceof Error ? `: ${error.message}` : '';
      this.sink(`[mindgate] ${message}${detail}`);
    } catch {
      // A broken sink must not break the host.
    }
  }
}
