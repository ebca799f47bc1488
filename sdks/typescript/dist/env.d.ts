/** Where apps attach when nothing else is configured. */
export declare const DEFAULT_URL = "ws://127.0.0.1:4747/ingest";
/** An environment to read: `process.env` or a test's own map. */
export type Env = Record<string, string | undefined>;
/**
 * Whether the SDK is on: `MINDGATE_DISABLED=1` / `GRAPHMIND_DISABLED=1` turn it off always;
 * then the explicit option; then a production-looking environment (`NODE_ENV=production`, …)
 * turns it off unless `MINDGATE=1` / `GRAPHMIND=1`.
 */
export declare function resolveEnabled(explicit: boolean | undefined, env: Env): boolean;
/** The viewer's ingest URL: the option, then `MINDGATE_URL`, then `GRAPHMIND_URL`, then the default. */
export declare function resolveUrl(explicit: string | undefined, env: Env): string;
