//! Which records a listing returns (the inspector's lists, the quarantine queue), as one
//! WHERE clause both backends run.

use crate::error::{MemoryError, Result};
use crate::rules::filter::FilterValue;
use crate::types::*;

/// Most rows one list returns.
pub const MAX_LIST: usize = 1000;

/// Which records [`SqliteMemory::list_items`] returns, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemFilter {
    /// Only this owner.
    pub user_id: Option<String>,
    /// Only records scoped to this agent.
    pub agent_id: Option<String>,
    /// Only records scoped to this session.
    pub session_id: Option<String>,
    /// Only this kind (working blocks are not items: use the working tier).
    pub kind: Option<MemoryKind>,
    /// Only this retrieval state.
    pub status: Option<MemoryStatus>,
    /// Also tombstoned (forgotten, rejected, pruned) records.
    pub include_deleted: bool,
    /// Also superseded facts.
    pub include_superseded: bool,
    /// Only facts with an open conflict: `conflictsWith` stored and no decision yet
    /// ([`crate::rules::conflicts`]).
    pub open_conflicts: bool,
    /// Most rows (default 100, at most [`MAX_LIST`]).
    pub limit: Option<usize>,
    /// Rows skipped first.
    pub offset: Option<usize>,
}

impl ItemFilter {
    /// The WHERE clause over `memory_items i` (one `?` per parameter, in order), its
    /// parameters, the limit and the offset — the same SQL in both backends.
    pub(crate) fn to_sql(&self) -> Result<(String, Vec<FilterValue>, usize, i64)> {
        let limit = self.limit.unwrap_or(100);
        if limit == 0 || limit > MAX_LIST {
            return Err(MemoryError::invalid(
                "limit",
                format!("between 1 and {MAX_LIST}"),
            ));
        }
        let mut clauses = vec!["i.kind <> 'working'".to_owned()];
        let mut args: Vec<FilterValue> = Vec::new();
        let mut text = |clause: &str, value: &str, clauses: &mut Vec<String>| {
            args.push(FilterValue::Text(value.to_owned()));
            clauses.push(clause.to_owned());
        };
        if let Some(user) = &self.user_id {
            text("i.user_id = ?", user, &mut clauses);
        }
        if let Some(agent) = &self.agent_id {
            text("i.agent_id = ?", agent, &mut clauses);
        }
        if let Some(session) = &self.session_id {
            text("i.session_id = ?", session, &mut clauses);
        }
        if let Some(kind) = self.kind {
            if kind == MemoryKind::Working || kind == MemoryKind::Shared {
                return Err(MemoryError::invalid(
                    "kind",
                    format!("`{kind}` records are not listed here"),
                ));
            }
            text("i.kind = ?", kind.as_str(), &mut clauses);
        }
        if let Some(status) = self.status {
            text("i.status = ?", status.as_str(), &mut clauses);
        }
        if !self.include_deleted {
            clauses.push("i.deleted_at IS NULL".to_owned());
        }
        if !self.include_superseded {
            clauses.push("i.superseded_by IS NULL".to_owned());
        }
        if self.open_conflicts {
            clauses.push(
                "i.conflicts_json IS NOT NULL AND i.conflict_decision_json IS NULL".to_owned(),
            );
        }
        let offset = i64::try_from(self.offset.unwrap_or(0)).unwrap_or(i64::MAX);
        Ok((clauses.join(" AND "), args, limit, offset))
    }
}
