//! What the read side of both backends shares: page sizes, `LIKE` escaping, raw JSON
//! rows, positional arguments for PostgreSQL statements built clause by clause, and the
//! gaps in a run's stored `seq`s.

use postgres::types::ToSql;
use serde_json::value::RawValue;

/// Largest page of events [`crate::RunStore::events`] returns.
pub const MAX_EVENT_PAGE: u32 = 5_000;
/// Default page of events.
pub const DEFAULT_EVENT_PAGE: u32 = 1_000;

pub(crate) fn escape_like(q: &str) -> String {
    let mut out = String::with_capacity(q.len() + 2);
    out.push('%');
    for c in q.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// Raw JSON text → boxed raw value, for rows read back from SQLite.
pub(crate) fn raw(text: String) -> Option<Box<RawValue>> {
    RawValue::from_string(text).ok()
}

/// Appends `clause` with each `?` standing for the new parameter `v`.
pub(crate) fn push_arg(
    sql: &mut String,
    args: &mut Vec<Box<dyn ToSql + Sync>>,
    clause: &str,
    v: Box<dyn ToSql + Sync>,
) {
    args.push(v);
    sql.push_str(&clause.replace('?', &format!("${}", args.len())));
}

/// The numbers of `first..=last` not in `held`.
pub(crate) fn absent(first: u64, last: u64, mut held: Vec<u64>) -> Vec<u64> {
    held.sort_unstable();
    (first..=last)
        .filter(|s| held.binary_search(s).is_err())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_lists_the_gaps() {
        assert_eq!(absent(3, 8, vec![8, 3, 5]), vec![4, 6, 7]);
        assert_eq!(absent(1, 2, vec![1, 2]), Vec::<u64>::new());
    }
}
