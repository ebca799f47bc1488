//! Maintenance under the store's (injectable) clock — decay, archive, capacity eviction —
//! decided once for both backends over [`MaintenanceWrites`].
//!
//! Retention of a fact is `exp(−days / (τ · max(0.5, strength)))`, days since its last
//! recall (or creation); each recall adds 0.1 strength. Salience = retention ×
//! importance scale (0.7 + 0.6 · importance, neutral 0.5) × trust multiplier.

use serde_json::{Value, json};

use crate::error::Result;
use crate::rules::row::{ItemRow, check_id};
use crate::time::{DAY_MS, format_ms};
use crate::trust::trust_multiplier;

/// Decay and eviction tunables.
#[derive(Debug, Clone)]
pub struct MaintenanceConfig {
    /// τ in days (default 7).
    pub tau_days: f64,
    /// Facts whose retention falls below this are archived (default 0.05).
    pub archive_below: f64,
    /// Most live facts per user; the least salient beyond it are archived (default none).
    pub capacity: Option<usize>,
}

impl Default for MaintenanceConfig {
    fn default() -> Self {
        Self {
            tau_days: 7.0,
            archive_below: 0.05,
            capacity: None,
        }
    }
}

/// What one maintenance pass did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceReport {
    /// Live facts looked at.
    pub scanned: usize,
    /// Archived for low retention.
    pub archived: Vec<String>,
    /// Archived for capacity.
    pub evicted: Vec<String>,
}

/// The retention of a row at `now`.
pub fn retention(now: i64, row: &ItemRow, config: &MaintenanceConfig) -> f64 {
    let since = row.last_accessed_at.unwrap_or(row.created_at);
    let days = (now - since).max(0) as f64 / DAY_MS as f64;
    let tau = config.tau_days.max(1e-9) * row.strength.max(0.5);
    (-days / tau).exp()
}

/// The salience of a row at `now` (what eviction ranks by).
pub fn salience(now: i64, row: &ItemRow, config: &MaintenanceConfig) -> f64 {
    let importance = row.importance.unwrap_or(0.5).clamp(0.0, 1.0);
    retention(now, row, config)
        * (0.7 + 0.6 * importance)
        * trust_multiplier(row.status(), row.provenance())
}

/// The reads and writes of a maintenance pass, inside one backend transaction.
pub(crate) trait MaintenanceWrites {
    /// One user's live facts (not deleted, superseded or archived), in insertion order.
    fn live_facts(&mut self, user_id: &str) -> Result<Vec<ItemRow>>;
    /// Archives a row at `now`, with its ledger row (`action`, by maintenance, `detail`).
    fn archive(&mut self, now: i64, row: &ItemRow, action: &str, detail: Value) -> Result<()>;
    /// Sets a `memory_meta` value.
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;
}

/// Runs decay and capacity eviction over one user's live facts at `now`; archived facts
/// keep their rows (recall them with `includeArchived`), each archive is a ledger row.
pub(crate) fn maintain(
    db: &mut dyn MaintenanceWrites,
    now: i64,
    user_id: &str,
    config: &MaintenanceConfig,
) -> Result<MaintenanceReport> {
    let rows = db.live_facts(user_id)?;
    let mut report = MaintenanceReport {
        scanned: rows.len(),
        ..MaintenanceReport::default()
    };
    let mut kept = Vec::new();
    for row in rows {
        let r = retention(now, &row, config);
        if r < config.archive_below {
            db.archive(now, &row, "archive", json!({ "retention": r }))?;
            report.archived.push(row.id.clone());
        } else {
            kept.push((salience(now, &row, config), row));
        }
    }
    if let Some(cap) = config.capacity.filter(|c| kept.len() > *c) {
        kept.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.rowid.cmp(&b.1.rowid)));
        let excess = kept.len() - cap;
        for (s, row) in kept.iter().take(excess) {
            db.archive(now, row, "evict", json!({ "salience": s, "capacity": cap }))?;
            report.evicted.push(row.id.clone());
        }
    }
    db.set_meta("lastConsolidatedAt", &format_ms(now))?;
    Ok(report)
}

/// Checks the user a pass is asked for.
pub(crate) fn check_user(user_id: &str) -> Result<()> {
    check_id("userId", user_id)
}
