//! The one temporal truth of the store: which versions stood at a transaction-time instant
//! `knownAt`, and which one held at a valid-time instant `asOf` as known then. Search's
//! filter ([`crate::rules::filter`]), `fact_at`'s belief ([`crate::rules::belief`]) and so
//! the inspector's sliders build their SQL from these clauses, so they cannot disagree.
//!
//! - A version **stands** at `knownAt` when it was stored by then, not yet tombstoned
//!   (forgotten, rejected, pruned), and trusted by then (validated or active from the
//!   start), unless quarantined records are asked for. Without `knownAt` the store's
//!   present state is read (`deletedAt` unset, status `active`).
//! - A fact **holds** at `asOf` when its validity window (`validFrom` .. `validTo`, open
//!   ends unbounded, `validTo` exclusive) contains it.
//! - The answer at (`asOf`, `knownAt`) is, per supersession chain, the **newest version that
//!   stands and holds**: a later version ends an earlier one's validity where its own
//!   begins, and a version superseded later in transaction time is still the answer for an
//!   `asOf` inside its own window. Without `asOf` the answer is the chain's head at
//!   `knownAt` (the version not yet superseded then).

use crate::rules::clause::{Filter, FilterValue};

/// The columns of alias `t` standing at `known_at` (now when `None`): stored, not
/// tombstoned, and trusted unless `include_quarantined`.
pub(crate) fn stands(f: &mut Filter, t: &str, known_at: Option<i64>, include_quarantined: bool) {
    match known_at {
        Some(k) => {
            f.push(&format!(
                "{t}.created_at <= ? AND ({t}.deleted_at IS NULL OR {t}.deleted_at > ?)"
            ));
            f.params.extend([k, k].map(FilterValue::Integer));
            if !include_quarantined {
                f.push(&format!(
                    "{t}.active_since IS NOT NULL AND {t}.active_since <= ?"
                ));
                f.params.push(FilterValue::Integer(k));
            }
        }
        None => {
            f.push(&format!("{t}.deleted_at IS NULL"));
            if !include_quarantined {
                f.push(&format!("{t}.status = 'active'"));
            }
        }
    }
}

/// Not archived at `known_at` (now when `None`).
pub(crate) fn not_archived(f: &mut Filter, t: &str, known_at: Option<i64>) {
    match known_at {
        Some(k) => {
            f.push(&format!("({t}.archived_at IS NULL OR {t}.archived_at > ?)"));
            f.params.push(FilterValue::Integer(k));
        }
        None => f.push(&format!("{t}.archived_at IS NULL")),
    }
}

/// The fact `t`'s validity window contains `as_of`.
pub(crate) fn holds(f: &mut Filter, t: &str, as_of: i64) {
    f.push(&format!(
        "({t}.valid_from IS NULL OR {t}.valid_from <= ?) AND ({t}.valid_to IS NULL OR {t}.valid_to > ?)"
    ));
    f.params.extend([as_of, as_of].map(FilterValue::Integer));
}

/// The head of its chain at `known_at`: not superseded by then (now when `None`).
pub(crate) fn head(f: &mut Filter, t: &str, known_at: Option<i64>) {
    match known_at {
        Some(k) => {
            f.push(&format!(
                "({t}.superseded_at IS NULL OR {t}.superseded_at > ?)"
            ));
            f.params.push(FilterValue::Integer(k));
        }
        None => f.push(&format!("{t}.superseded_by IS NULL")),
    }
}

/// No later version of `i`'s chain (walked over `superseded_by`) both stands (trusted)
/// and holds at (`as_of`, `known_at`): `i` is then the newest that does, if it does.
pub(crate) fn no_later_holder(f: &mut Filter, as_of: i64, known_at: Option<i64>) {
    let mut later = Filter::default();
    stands(&mut later, "n", known_at, false);
    holds(&mut later, "n", as_of);
    f.push(&format!(
        "NOT EXISTS (WITH RECURSIVE later(id) AS (SELECT i.superseded_by \
         UNION SELECT n.superseded_by FROM memory_items n JOIN later ON n.id = later.id \
         WHERE n.superseded_by IS NOT NULL) \
         SELECT 1 FROM later JOIN memory_items n ON n.id = later.id WHERE {})",
        later.sql
    ));
    f.params.extend(later.params);
}

/// The versions answering at (`as_of`, `known_at`), over `memory_items i`: the belief
/// oracle's `valid` (trusted, archive ignored).
pub(crate) fn answer_at(as_of: i64, known_at: Option<i64>) -> Filter {
    let mut f = Filter::default();
    stands(&mut f, "i", known_at, false);
    holds(&mut f, "i", as_of);
    no_later_holder(&mut f, as_of, known_at);
    f
}
