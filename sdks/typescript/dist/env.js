// Kill switches and the viewer URL from the environment (the Rust SDK's and graphmind-ai's rules).
/** Where apps attach when nothing else is configured. */
export const DEFAULT_URL = 'ws://127.0.0.1:4747/ingest';
/** Checked in order; the first one that is set decides whether this looks like production. */
const ENVIRONMENT_VARS = ['MINDGATE_ENV', 'GRAPHMIND_ENV', 'ENVIRONMENT', 'APP_ENV', 'NODE_ENV', 'ENV'];
function looksLikeProduction(env) {
    for (const key of ENVIRONMENT_VARS) {
        const value = env[key];
        if (value === undefined || value === '')
            continue;
        const v = value.trim().toLowerCase();
        return v === 'production' || v === 'prod';
    }
    return false;
}
/**
 * Whether the SDK is on: `MINDGATE_DISABLED=1` / `GRAPHMIND_DISABLED=1` turn it off always;
 * then the explicit option; then a production-looking environment (`NODE_ENV=production`, …)
 * turns it off unless `MINDGATE=1` / `GRAPHMIND=1`.
 */
export function resolveEnabled(explicit, env) {
    if (env.MINDGATE_DISABLED === '1' || env.GRAPHMIND_DISABLED === '1')
        return false;
    if (explicit !== undefined)
        return explicit;
    if (!looksLikeProduction(env))
        return true;
    return env.MINDGATE === '1' || env.GRAPHMIND === '1';
}
/** The viewer's ingest URL: the option, then `MINDGATE_URL`, then `GRAPHMIND_URL`, then the default. */
export function resolveUrl(explicit, env) {
    return explicit || env.MINDGATE_URL || env.GRAPHMIND_URL || DEFAULT_URL;
}
