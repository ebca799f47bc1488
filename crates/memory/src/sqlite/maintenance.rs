//! Maintenance under the store's (injectable) clock: decay, archive, capacity eviction.
//!
//! Retention of a fact is `exp(−days / (τ · max(0.5, strength)))`, days since its last
//! recall (or creation); each recall adds 0.1 strength. Salience = retention ×
//! importance scale (0.7 + 0.6 · importance, neutral 0.5) × trust multiplier.

use rusqlite::params;
use serde_json::json;

use crate::error::Result;
use crate::sqlite::items::{ITEM_COLUMNS, ItemRow, check_id};
use crate::sqlite::{SqliteMemory, ledger};
use crate::time::{DAY_MS, format_ms};
use crate::trust::trust_multiplier;
use crate::types::Actor;

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

impl SqliteMemory {
    /// Runs decay and capacity eviction over one user's live facts; archived facts keep
    /// their rows (recall them with `includeArchived`), each archive is a ledger row.
    pub fn maintain(&self, user_id: &str) -> Result<MaintenanceReport> {
        check_id("userId", user_id)?;
        let config = self.config.maintenance.clone();
        self.write(|tx, now| {
            let mut stmt = tx.prepare(&format!(
                "SELECT {ITEM_COLUMNS} FROM memory_items i WHERE i.user_id = ?1 AND i.kind = 'semantic' \
                 AND i.deleted_at IS NULL AND i.superseded_by IS NULL AND i.archived_at IS NULL ORDER BY i.rowid"
            ))?;
            let rows = stmt
                .query_map(params![user_id], crate::sqlite::items::item_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            drop(stmt);
            let mut report = MaintenanceReport { scanned: rows.len(), ..MaintenanceReport::default() };
            let mut kept = Vec::new();
            for row in rows {
                let r = retention(now, &row, &config);
                if r < config.archive_below {
                    archive(tx, now, &row, "archive", json!({ "retention": r }))?;
                    report.archived.push(row.id.clone());
                } else {
                    kept.push((salience(now, &row, &config), row));
                }
            }
            if let Some(cap) = config.capacity.filter(|c| kept.len() > *c) {
                kept.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.rowid.cmp(&b.1.rowid)));
                let excess = kept.len() - cap;
                for (s, row) in kept.iter().take(excess) {
                    archive(tx, now, row, "evict", json!({ "salience": s, "capacity": cap }))?;
                    report.evicted.push(row.id.clone());
                }
            }
            tx.execute(
                "INSERT OR REPLACE INTO memory_meta (key, value) VALUES ('lastConsolidatedAt', ?1)",
                params![format_ms(now)],
            )?;
            Ok(report)
        })
    }
}

fn archive(
    tx: &rusqlite::Transaction<'_>,
    now: i64,
    row: &ItemRow,
    action: &str,
    detail: serde_json::Value,
) -> Result<()> {
    tx.execute(
        "UPDATE memory_items SET archived_at = ?1, updated_at = ?1 WHERE rowid = ?2",
        params![now, row.rowid],
    )?;
    ledger::append(
        tx,
        now,
        &row.id,
        action,
        Actor::Maintenance,
        None,
        Some(detail),
    )
}
