//! The record filter of a search (and of the belief and listing reads): one WHERE clause
//! over `memory_items i`, the same SQL in both backends.

use crate::error::{MemoryError, Result};
pub use crate::rules::clause::{Filter, FilterValue};
use crate::rules::row::check_id;
use crate::rules::temporal;
use crate::time::parse_opt;
use crate::types::*;

impl Filter {
    /// Builds the filter of a search (validating every option).
    pub fn from_options(o: &MemorySearchOptions, kinds: &[MemoryKind]) -> Result<Self> {
        let mut f = Self::default();
        let user = o
            .user_id
            .as_deref()
            .ok_or_else(|| MemoryError::invalid("userId", "a search needs a userId scope"))?;
        check_id("userId", user)?;
        f.push("i.user_id = ?");
        f.params.push(FilterValue::Text(user.to_owned()));
        if let Some(agent) = &o.agent_id {
            check_id("agentId", agent)?;
            f.push("i.agent_id = ?");
            f.params.push(FilterValue::Text(agent.clone()));
        }
        if let Some(session) = &o.session_id {
            check_id("sessionId", session)?;
            f.push("i.session_id = ?");
            f.params.push(FilterValue::Text(session.clone()));
        }
        let list = kinds
            .iter()
            .map(|k| format!("'{}'", k.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        f.push(&format!("i.kind IN ({list})"));
        for tag in o.tags.iter().flatten() {
            f.push(
                "EXISTS (SELECT 1 FROM memory_tags t WHERE t.tag = ? AND t.item_rowid = i.rowid)",
            );
            f.params.push(FilterValue::Text(tag.clone()));
        }
        if let Some(range) = &o.date_range {
            if let Some(from) = parse_opt("dateRange.from", range.from.as_deref())? {
                f.push("i.created_at >= ?");
                f.params.push(FilterValue::Integer(from));
            }
            if let Some(to) = parse_opt("dateRange.to", range.to.as_deref())? {
                f.push("i.created_at <= ?");
                f.params.push(FilterValue::Integer(to));
            }
        }
        let archived = o.include_archived.unwrap_or(false);
        let quarantined = o.include_quarantined.unwrap_or(false);
        let known_at = parse_opt("knownAt", o.known_at.as_deref())?;
        let as_of = parse_opt("asOf", o.as_of.as_deref())?;
        f.known_at = known_at;
        temporal::stands(&mut f, "i", known_at, quarantined);
        if !archived {
            temporal::not_archived(&mut f, "i", known_at);
        }
        match as_of {
            None => temporal::head(&mut f, "i", known_at),
            Some(a) => {
                f.push(
                    "(CASE i.kind \
                     WHEN 'semantic' THEN (i.valid_from IS NULL OR i.valid_from <= ?) AND (i.valid_to IS NULL OR i.valid_to > ?) \
                     WHEN 'episodic' THEN i.started_at <= ? \
                     ELSE i.created_at <= ? END)",
                );
                f.params.extend([a, a, a, a].map(FilterValue::Integer));
                temporal::no_later_holder(&mut f, a, known_at);
            }
        }
        Ok(f)
    }
}
