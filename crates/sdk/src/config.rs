//! Configuration: every option and environment variable, defined in one place.
//!
//! Precedence for *whether the SDK is on*:
//! 1. [`MINDGATE_DISABLED`]`=1` or [`GRAPHMIND_DISABLED`]`=1` → off, always (beats code);
//! 2. [`Config::enabled`] when set in code;
//! 3. a production-looking environment (the first of [`PRODUCTION_VARS`] that is set
//!    says `production`/`prod`) → off unless [`MINDGATE_FORCE`]`=1` or [`GRAPHMIND_FORCE`]`=1`;
//! 4. otherwise on.
//!
//! Precedence for the viewer URL: [`Config::url`], then [`MINDGATE_URL`], then
//! [`GRAPHMIND_URL`], then [`DEFAULT_URL`].

use std::collections::HashMap;
use std::time::Duration;

/// Where a viewer listens when nothing else is configured.
pub const DEFAULT_URL: &str = "ws://127.0.0.1:4747/ingest";
/// Viewer URL (Mindgate spelling).
pub const MINDGATE_URL: &str = "MINDGATE_URL";
/// Viewer URL (GraphMind spelling, honoured for compatibility).
pub const GRAPHMIND_URL: &str = "GRAPHMIND_URL";
/// `1` turns the SDK off: no sockets, no buffering, wrappers just run the body.
pub const MINDGATE_DISABLED: &str = "MINDGATE_DISABLED";
/// GraphMind spelling of [`MINDGATE_DISABLED`].
pub const GRAPHMIND_DISABLED: &str = "GRAPHMIND_DISABLED";
/// `1` keeps the SDK on in a production-looking environment.
pub const MINDGATE_FORCE: &str = "MINDGATE";
/// GraphMind spelling of [`MINDGATE_FORCE`].
pub const GRAPHMIND_FORCE: &str = "GRAPHMIND";
/// Loop-guard threshold (non-negative integer; `0` turns the guard off).
pub const MINDGATE_LOOP_THRESHOLD: &str = "MINDGATE_LOOP_THRESHOLD";
/// GraphMind spelling of [`MINDGATE_LOOP_THRESHOLD`].
pub const GRAPHMIND_LOOP_THRESHOLD: &str = "GRAPHMIND_LOOP_THRESHOLD";
/// Loop-guard mode: `pause`, `warn` or `off`.
pub const MINDGATE_ON_LOOP: &str = "MINDGATE_ON_LOOP";
/// GraphMind spelling of [`MINDGATE_ON_LOOP`].
pub const GRAPHMIND_ON_LOOP: &str = "GRAPHMIND_ON_LOOP";
/// Checked in order; the first one that is set decides whether this is production.
pub const PRODUCTION_VARS: &[&str] = &[
    "MINDGATE_ENV",
    "GRAPHMIND_ENV",
    "ENVIRONMENT",
    "APP_ENV",
    "RUST_ENV",
    "ENV",
    "NODE_ENV",
];

/// Default ring-buffer capacity (events kept for replay on attach).
pub const DEFAULT_BUFFER_SIZE: usize = 2_000;
/// Payloads whose JSON is larger than this many bytes are shrunk, with a marker.
pub const MAX_PAYLOAD_BYTES: usize = 512 * 1024;
/// Default loop-guard threshold: the third identical back-to-back call holds.
pub const DEFAULT_LOOP_THRESHOLD: u32 = 3;

/// What the loop guard does when it sees repeated identical tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoopMode {
    /// Hold the call at its `before` gate with `reason: "loop"` (when attached).
    #[default]
    Pause,
    /// Log one warning per streak and carry on.
    Warn,
    /// Do nothing.
    Off,
}

impl LoopMode {
    /// Parses `pause` / `warn` / `off` (also `0`, `false`, `none` for off), case-insensitively.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "pause" => Some(LoopMode::Pause),
            "warn" => Some(LoopMode::Warn),
            "off" | "0" | "false" | "none" => Some(LoopMode::Off),
            _ => None,
        }
    }
}

/// Loop-guard settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopGuardConfig {
    /// How many identical back-to-back calls trip the guard (`0` = never).
    pub threshold: u32,
    /// What happens when it trips.
    pub mode: LoopMode,
    /// Node ids or names that legitimately repeat (polling) and are never held.
    pub allow_nodes: Vec<String>,
    /// Input keys ignored by the fingerprint at every depth (default: MCP's `_meta`).
    pub ignore_keys: Vec<String>,
}

impl Default for LoopGuardConfig {
    fn default() -> Self {
        LoopGuardConfig {
            threshold: DEFAULT_LOOP_THRESHOLD,
            mode: LoopMode::Pause,
            allow_nodes: Vec::new(),
            ignore_keys: vec!["_meta".to_owned()],
        }
    }
}

/// Client options. Build with [`Config::default`] and the builder methods.
///
/// ```
/// use std::time::Duration;
/// let config = mindgate_sdk::Config::default()
///     .app("support-agent")
///     .url("ws://127.0.0.1:4747/ingest")
///     .pause_timeout(Some(Duration::from_secs(600)));
/// assert_eq!(config.app_name, "support-agent");
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    /// Application name shown in the run list.
    pub app_name: String,
    /// Viewer URL; `None` → environment → [`DEFAULT_URL`].
    pub url: Option<String>,
    /// Force on/off from code; `None` → environment rules. The kill switch still wins.
    pub enabled: Option<bool>,
    /// Metadata merged into every run's `meta`.
    pub meta: Option<serde_json::Map<String, serde_json::Value>>,
    /// Ring-buffer capacity (events kept for replay), at least 1.
    pub buffer_size: usize,
    /// TCP + WebSocket upgrade timeout.
    pub connect_timeout: Duration,
    /// How long to wait for `hello.ack`.
    pub handshake_timeout: Duration,
    /// Pause between background reconnect attempts.
    pub retry_interval: Duration,
    /// Token batching interval (`node.token` at most once per interval per instance).
    pub token_interval: Duration,
    /// Release a held gate with `continue` after this long (`None` = wait forever).
    pub pause_timeout: Option<Duration>,
    /// Whether step mode also pauses at `after` gates (it always pauses at `before`).
    pub step_pauses_after: bool,
    /// Minimum interval between two warnings with the same key.
    pub warn_interval: Duration,
    /// Loop-guard settings (environment fills what code leaves at default).
    pub loop_guard: LoopGuardConfig,
    /// Environment override (tests); `None` reads the process environment.
    pub env: Option<HashMap<String, String>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            app_name: "rust-app".to_owned(),
            url: None,
            enabled: None,
            meta: None,
            buffer_size: DEFAULT_BUFFER_SIZE,
            connect_timeout: Duration::from_millis(300),
            handshake_timeout: Duration::from_secs(1),
            retry_interval: Duration::from_secs(10),
            token_interval: Duration::from_millis(34),
            pause_timeout: None,
            step_pauses_after: true,
            warn_interval: Duration::from_secs(60),
            loop_guard: LoopGuardConfig::default(),
            env: None,
        }
    }
}

impl Config {
    /// Sets the application name.
    #[must_use]
    pub fn app(mut self, name: impl Into<String>) -> Self {
        self.app_name = name.into();
        self
    }

    /// Sets the viewer URL (beats the environment).
    #[must_use]
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// Forces the SDK on or off from code (the `*_DISABLED=1` kill switch still wins).
    #[must_use]
    pub fn enabled(mut self, on: bool) -> Self {
        self.enabled = Some(on);
        self
    }

    /// Sets the ring-buffer capacity.
    #[must_use]
    pub fn buffer_size(mut self, events: usize) -> Self {
        self.buffer_size = events.max(1);
        self
    }

    /// Sets the background reconnect interval.
    #[must_use]
    pub fn retry_interval(mut self, every: Duration) -> Self {
        self.retry_interval = every;
        self
    }

    /// Sets the token batching interval.
    #[must_use]
    pub fn token_interval(mut self, every: Duration) -> Self {
        self.token_interval = every;
        self
    }

    /// Sets (or clears) the pause timeout.
    #[must_use]
    pub fn pause_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.pause_timeout = timeout;
        self
    }

    /// Sets the loop-guard settings.
    #[must_use]
    pub fn loop_guard(mut self, guard: LoopGuardConfig) -> Self {
        self.loop_guard = guard;
        self
    }

    /// Uses `vars` instead of the process environment (for tests).
    #[must_use]
    pub fn env<K: Into<String>, V: Into<String>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.env = Some(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        );
        self
    }

    fn var(&self, key: &str) -> Option<String> {
        match &self.env {
            Some(map) => map.get(key).cloned(),
            None => std::env::var(key).ok(),
        }
        .filter(|v| !v.is_empty())
    }

    /// Whether the SDK is on, after applying the kill switches and production rule.
    pub fn resolve_enabled(&self) -> bool {
        let is_one = |key: &str| self.var(key).is_some_and(|v| v.trim() == "1");
        if is_one(MINDGATE_DISABLED) || is_one(GRAPHMIND_DISABLED) {
            return false;
        }
        if let Some(on) = self.enabled {
            return on;
        }
        let production = PRODUCTION_VARS
            .iter()
            .find_map(|key| self.var(key))
            .is_some_and(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "production" | "prod"
                )
            });
        !production || is_one(MINDGATE_FORCE) || is_one(GRAPHMIND_FORCE)
    }

    /// The viewer URL after applying config, then environment, then the default.
    pub fn resolve_url(&self) -> String {
        self.url
            .clone()
            .or_else(|| self.var(MINDGATE_URL))
            .or_else(|| self.var(GRAPHMIND_URL))
            .unwrap_or_else(|| DEFAULT_URL.to_owned())
    }

    /// The loop-guard settings with the environment applied where code kept the defaults.
    pub fn resolve_loop_guard(&self) -> LoopGuardConfig {
        let mut guard = self.loop_guard.clone();
        let defaults = LoopGuardConfig::default();
        if guard.threshold == defaults.threshold
            && let Some(t) = self
                .var(MINDGATE_LOOP_THRESHOLD)
                .or_else(|| self.var(GRAPHMIND_LOOP_THRESHOLD))
                .and_then(|v| v.trim().parse::<u32>().ok())
        {
            guard.threshold = t;
        }
        if guard.mode == defaults.mode
            && let Some(m) = self
                .var(MINDGATE_ON_LOOP)
                .or_else(|| self.var(GRAPHMIND_ON_LOOP))
                .and_then(|v| LoopMode::parse(&v))
        {
            guard.mode = m;
        }
        guard
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn kill_switch_beats_code() {
        let c = Config::default()
            .enabled(true)
            .env([(GRAPHMIND_DISABLED, "1")]);
        assert!(!c.resolve_enabled());
        let c = Config::default()
            .enabled(true)
            .env([(MINDGATE_DISABLED, "1")]);
        assert!(!c.resolve_enabled());
    }

    #[test]
    fn production_needs_force() {
        let none: [(&str, &str); 0] = [];
        assert!(Config::default().env(none).resolve_enabled());
        assert!(
            !Config::default()
                .env([("APP_ENV", "Production")])
                .resolve_enabled()
        );
        assert!(
            Config::default()
                .env([("APP_ENV", "prod"), (GRAPHMIND_FORCE, "1")])
                .resolve_enabled()
        );
        // The first variable that is set decides.
        assert!(
            Config::default()
                .env([("ENVIRONMENT", "dev"), ("NODE_ENV", "production")])
                .resolve_enabled()
        );
    }

    #[test]
    fn url_precedence() {
        let none: [(&str, &str); 0] = [];
        assert_eq!(Config::default().env(none).resolve_url(), DEFAULT_URL);
        let env = [
            (GRAPHMIND_URL, "ws://127.0.0.1:1/g"),
            (MINDGATE_URL, "ws://127.0.0.1:2/m"),
        ];
        assert_eq!(
            Config::default().env(env).resolve_url(),
            "ws://127.0.0.1:2/m"
        );
        assert_eq!(
            Config::default()
                .env(env)
                .url("ws://127.0.0.1:3/c")
                .resolve_url(),
            "ws://127.0.0.1:3/c"
        );
        assert_eq!(
            Config::default()
                .env([(GRAPHMIND_URL, "ws://127.0.0.1:1/g")])
                .resolve_url(),
            "ws://127.0.0.1:1/g"
        );
    }

    #[test]
    fn loop_guard_from_env() {
        let g = Config::default()
            .env([(GRAPHMIND_LOOP_THRESHOLD, "5"), (GRAPHMIND_ON_LOOP, "WARN")])
            .resolve_loop_guard();
        assert_eq!((g.threshold, g.mode), (5, LoopMode::Warn));
        let g = Config::default()
            .env([(MINDGATE_LOOP_THRESHOLD, "nope")])
            .resolve_loop_guard();
        assert_eq!(g.threshold, DEFAULT_LOOP_THRESHOLD);
    }
}
