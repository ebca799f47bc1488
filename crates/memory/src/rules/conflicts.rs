//! Conflicts between facts (issue 28, item 3), written once for every backend over the
//! store's contract: a fact whose predicate is **single-valued** (one object at a time:
//! where someone lives, works, their email, …) conflicts with each active, current fact of
//! the same user whose subject resolves to the same entity and whose object resolves to a
//! different one. Names resolve through the entity graph: folded
//! ([`super::entities::normalize_name`]) and mapped to their root, so an alias merged
//! into an entity is that entity, not a conflict.
//!
//! The conflicts found when a fact is remembered or validated are stored with it
//! ([`detect`]: `conflictsWith`, a `conflict` ledger row), so the quarantine queue and the
//! inspector show them later; a person then decides ([`decide`]): the new fact supersedes
//! the ones it contradicts, both stay, or the new one is rejected — one `conflict.decide`
//! ledger row per fact involved.
//!
//! **Who a contradiction holds back** ([`remember`], the one rule `agent::remember` — HTTP
//! `POST /api/memory/facts`, MCP `fact_remember`, the CLI — remembers a fact with): a new
//! fact that contradicts an active, current fact lands `quarantined` unless its provenance
//! is a person's — `user`, the only provenance that is a person's word
//! ([`held_on_conflict`]). `agent`, `tool`, `imported`, the derived provenances
//! (quarantined by the trust gate anyway) and a write naming no provenance (maintenance)
//! are not, so such a fact waits for a person with the reason `contradicts active
//! fact(s) …` ([`hold_reason`], stored as its quarantine reason and on its `quarantine`
//! ledger row) and never answers a search next to the fact it contradicts. A person's fact
//! lands as the trust gate decides (active unless flagged) and carries its conflict until
//! a person decides it. Validating a held fact is a person's act: anyone else — an agent the
//! operator lets validate (MCP `--allow-validate`), maintenance — is refused while its
//! conflict is open ([`check_validator`]: "a person must decide"). A person's validation
//! does not hold it again: it becomes active with its conflict open ([`detect`]), as any
//! validated fact, and only a person decides.
//!
//! **A supersession that would overrule a person** ([`held_on_supersede`], checked by the
//! semantic tier's `supersede` — the one core HTTP `POST /api/memory/records/{id}/supersede`
//! and MCP `fact_supersede` reach — in the transaction that would link the versions): a new
//! version whose provenance is not `user` of a fact whose provenance is `user` (whatever its
//! status) is not applied. The new version is stored `quarantined` with [`supersede_hold_reason`]
//! (`would supersede a person's fact <id>`, after any reason of the trust gate's) and
//! `conflictsWith = [<id>]` (a `conflict` ledger row carrying the caller's reason,
//! [`hold_supersession`]); the person's fact stays active and current. A person then
//! decides as for any conflict ([`decide`]): "supersede the old one" links the versions as
//! the direct supersession would have (the old one's `supersededAt` and the new one's
//! `activeSince` are the decision's time, so `knownAt` before it still reads the person's
//! fact), "keep both" and "reject" as for a contradiction. The rule is the person/not-person
//! line of [`held_on_conflict`], not a ranking of provenances: `agent`, `tool` and
//! `imported` are peers (none overrules another), and a derived provenance lands quarantined
//! by the trust gate anyway, so the one authority a supersession could usurp is a person's.
//!
//! **A supersession that would land quarantined** ([`held_until_validated`], at the same
//! place, through the one [`supersede_hold`]): a new version the trust gate would land
//! `quarantined` (a derived provenance, or text it flags) of an active fact never supersedes
//! it on arrival — otherwise the old fact would stop answering while the new one, being
//! quarantined, does not either until a person validates it. It is held as above, with
//! [`validation_hold_reason`] (`would supersede fact <id> once validated`, after the gate's
//! own reasons) and `conflictsWith = [<id>]`; the old fact stays active, current and the
//! answer, and a person decides ("supersede the old one" validates and applies it).
//! Superseding a quarantined fact (it answered nothing) still supersedes at once, the new
//! version inheriting the quarantine; so do a clean version of a fact that is not a
//! person's and a person's write of provenance `user`. Consolidation and induction never
//! supersede facts, so the rule holds back no flow of theirs.

use std::collections::HashMap;

use serde_json::json;

use crate::error::{MemoryError, Result};
use crate::rules::entities::normalize_name;
use crate::rules::row::{ItemRow, index_text};
use crate::rules::writes::{
    ItemWrites, check_reject_reason, link_supersession, tombstone, validate,
};
use crate::store::{EntityGraph, MemoryStore, SemanticMemory};
use crate::time::format_ms;
use crate::trust;
use crate::types::*;

/// Predicates that hold one object at a time unless configured otherwise
/// (`MemoryConfig::single_valued_predicates` adds to them).
pub const DEFAULT_SINGLE_VALUED: [&str; 10] = [
    "lives_in",
    "works_at",
    "email",
    "phone",
    "birthday",
    "seat_preference",
    "born_in",
    "nationality",
    "spouse",
    "employer",
];

/// A predicate folded for comparison: lowercase, spaces and hyphens as underscores.
pub fn fold_predicate(predicate: &str) -> String {
    predicate
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c == ' ' || c == '-' { '_' } else { c })
        .collect()
}

/// True when `predicate` is single-valued: in the default list or in `extra`.
pub fn is_single_valued(predicate: &str, extra: &[String]) -> bool {
    let p = fold_predicate(predicate);
    DEFAULT_SINGLE_VALUED.contains(&p.as_str()) || extra.iter().any(|e| fold_predicate(e) == p)
}

/// The ids of the active, current facts `fact` conflicts with (oldest first; none when
/// its predicate is not single-valued or it has no subject or object).
pub fn conflicts_with<S: MemoryStore>(
    store: &S,
    fact: &Fact,
    extra: &[String],
) -> Result<Vec<String>> {
    let question = Question {
        user_id: &fact.record.user_id,
        id: Some(&fact.record.id),
        supersedes: fact.supersedes.as_deref(),
        subject: fact.subject.as_deref(),
        predicate: fact.predicate.as_deref(),
        object: fact.object.as_deref(),
    };
    find(store, &question, extra)
}

/// What a fact asserts, stored or not yet: whose it is, which fact it is (none before it is
/// stored) and which version it replaces.
struct Question<'a> {
    user_id: &'a str,
    id: Option<&'a str>,
    supersedes: Option<&'a str>,
    subject: Option<&'a str>,
    predicate: Option<&'a str>,
    object: Option<&'a str>,
}

/// [`conflicts_with`] for a fact stored or about to be.
fn find<S: MemoryStore>(store: &S, fact: &Question<'_>, extra: &[String]) -> Result<Vec<String>> {
    let (Some(subject), Some(predicate), Some(object)) =
        (fact.subject, fact.predicate, fact.object)
    else {
        return Ok(Vec::new());
    };
    if !is_single_valued(predicate, extra) {
        return Ok(Vec::new());
    }
    let entities = store.entities().list(fact.user_id)?;
    let roots: HashMap<String, String> = entities
        .iter()
        .map(|e| {
            let root = e.merged_into.clone().unwrap_or_else(|| e.id.clone());
            (e.normalized_name.clone(), root)
        })
        .collect();
    let resolve = |name: &str| {
        let folded = normalize_name(name);
        roots.get(&folded).cloned().unwrap_or(folded)
    };
    let subject_root = resolve(subject);
    let object_root = resolve(object);
    let Some(entity) = entities.iter().find(|e| e.id == subject_root) else {
        return Ok(Vec::new());
    };
    let predicate = fold_predicate(predicate);
    let mut out = Vec::new();
    for id in store.entities().facts_for(&entity.id)? {
        if fact.id == Some(id.as_str()) || fact.supersedes == Some(id.as_str()) {
            continue;
        }
        let other = store.semantic().get(&id)?;
        let current = other.record.deleted_at.is_none()
            && other.superseded_by.is_none()
            && other.trust.status.unwrap_or(MemoryStatus::Active) == MemoryStatus::Active;
        let same_question = other.predicate.as_deref().map(fold_predicate)
            == Some(predicate.clone())
            && other.subject.as_deref().map(resolve) == Some(subject_root.clone());
        let other_answer = other.object.as_deref().map(resolve);
        if current && same_question && other_answer.is_some_and(|o| o != object_root) {
            out.push(id);
        }
    }
    Ok(out)
}

/// True when a fact of `provenance` that contradicts an active fact lands quarantined: every
/// provenance but `user` (a person's word), and a write that names none.
pub fn held_on_conflict(provenance: Option<MemoryProvenance>) -> bool {
    provenance != Some(MemoryProvenance::User)
}

/// What the quarantine reason of a fact held back because it contradicts active facts
/// begins with ([`hold_reason`]; after the trust gate's own reasons, when it had any).
pub const CONTRADICTION_HOLD_PREFIX: &str = "contradicts active fact";

/// The quarantine reason of a fact held back because it contradicts the facts `with`.
pub fn hold_reason(with: &[String]) -> String {
    let facts = if with.len() == 1 { "fact" } else { "facts" };
    format!("contradicts active {facts} {}", with.join(", "))
}

/// True when a new version of provenance `new` of a fact of provenance `old` is held for a
/// person instead of superseding it (the module's head): the old fact is a person's word
/// (`user`) and the new version is not ([`held_on_conflict`]).
pub fn held_on_supersede(old: Option<MemoryProvenance>, new: Option<MemoryProvenance>) -> bool {
    old == Some(MemoryProvenance::User) && held_on_conflict(new)
}

/// True when a new version that the trust gate lands in `new` (its verdict on the version's
/// provenance and text: [`crate::trust::gate`]) of a fact in status `old` is held for a
/// person instead of superseding it (the module's head): a version that would land
/// quarantined never supersedes an active fact on arrival, since the old fact would stop
/// answering while nothing else does until a person validates the new one. A quarantined
/// old fact answers nothing, so superseding it loses no answer and goes ahead (the new
/// version inherits its quarantine).
pub fn held_until_validated(old: MemoryStatus, new: MemoryStatus) -> bool {
    old == MemoryStatus::Active && new == MemoryStatus::Quarantined
}

/// Why a new version is held for a person instead of superseding fact `old_id` (none: it
/// supersedes at once) — the one rule the semantic tier's `supersede` applies:
/// [`supersede_hold_reason`] when the old fact is a person's ([`held_on_supersede`]; it
/// wins when both hold), else [`validation_hold_reason`] when the version would land
/// quarantined over an active fact ([`held_until_validated`]). `old` and `new` are each a
/// provenance and a status (`new`'s status is the trust gate's verdict).
pub fn supersede_hold(
    old_id: &str,
    old: (Option<MemoryProvenance>, MemoryStatus),
    new: (Option<MemoryProvenance>, MemoryStatus),
) -> Option<String> {
    if held_on_supersede(old.0, new.0) {
        Some(supersede_hold_reason(old_id))
    } else if held_until_validated(old.1, new.1) {
        Some(validation_hold_reason(old_id))
    } else {
        None
    }
}

/// What the quarantine reason of a new version held because it would supersede a person's
/// fact begins with (the viewer's conflict card tells such a held supersession from a
/// contradiction by it).
pub const SUPERSEDE_HOLD_PREFIX: &str = "would supersede a person's fact";

/// What the quarantine reason of a new version held until a person validates it
/// ([`held_until_validated`]) begins with (the viewer's conflict card words it by it).
pub const VALIDATION_HOLD_PREFIX: &str = "would supersede fact";

/// The quarantine reason of a new version held because it would supersede the person's
/// fact `old_id` ([`held_on_supersede`]).
pub fn supersede_hold_reason(old_id: &str) -> String {
    format!("{SUPERSEDE_HOLD_PREFIX} {old_id}")
}

/// The quarantine reason of a new version held because it would land quarantined over the
/// active fact `old_id` ([`held_until_validated`]): `would supersede fact <id> once
/// validated`.
pub fn validation_hold_reason(old_id: &str) -> String {
    format!("{VALIDATION_HOLD_PREFIX} {old_id} once validated")
}

/// True when a quarantine reason names a held supersession of either kind
/// ([`SUPERSEDE_HOLD_PREFIX`], [`VALIDATION_HOLD_PREFIX`]; after the trust gate's own
/// reasons, when it had any).
pub fn is_supersede_hold(reason: &str) -> bool {
    reason.contains(SUPERSEDE_HOLD_PREFIX) || reason.contains(VALIDATION_HOLD_PREFIX)
}

/// Stores the held new version `new` (already written quarantined with the reason of
/// [`supersede_hold`]) as conflicting with the fact `old` it would have
/// superseded, with a `conflict` ledger row carrying the caller's `reason`, so the
/// quarantine queue shows it as a conflict and a person decides it with [`decide`].
pub(crate) fn hold_supersession(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    new: &ItemRow,
    old: &ItemRow,
    reason: &str,
    by: Actor,
) -> Result<()> {
    let with = [old.id.clone()];
    let ids = serde_json::to_string(&with)
        .map_err(|e| MemoryError::Conflict(format!("conflicts of {}: {e}", new.id)))?;
    w.set_conflicts(new.rowid, Some(&ids))?;
    w.ledger(
        now,
        &new.id,
        "conflict",
        by,
        Some(reason),
        Some(json!({ "conflictsWith": with, "wouldSupersede": old.id })),
    )
}

/// Remembers `new` under the conflict rule (the module's head): its conflicts with the
/// active facts are found before it is written, and a fact whose provenance is not a
/// person's ([`held_on_conflict`]) that has any is stored quarantined with
/// [`hold_reason`]; once stored, its conflicts are found again and stored with it
/// ([`detect`]) — and one that turned up only then (a contradicting fact written in
/// between) moves it to quarantine in the same transaction, while a hold whose
/// contradicted facts were forgotten, rejected or superseded in between is recomputed
/// there ([`store`]: its reason names the facts still contradicted, or it is released).
/// `extra` adds single-valued predicates.
pub fn remember<S: MemoryStore>(store: &S, new: NewFact, extra: &[String]) -> Result<Fact> {
    let by = new.meta.by;
    let held = if held_on_conflict(new.meta.provenance) {
        let question = Question {
            user_id: &new.meta.scope.user_id,
            id: None,
            supersedes: None,
            subject: new.subject.as_deref(),
            predicate: new.predicate.as_deref(),
            object: new.object.as_deref(),
        };
        let found = find(store, &question, extra)?;
        (!found.is_empty()).then(|| hold_reason(&found))
    } else {
        None
    };
    let was_held = held.is_some();
    let fact = match held {
        Some(reason) => store.semantic().remember_quarantined(new, &reason)?,
        None => store.semantic().remember(new)?,
    };
    let found = conflicts_with(store, &fact, extra)?;
    if found.is_empty() && !was_held {
        return Ok(fact);
    }
    // Stored in a transaction that re-reads the facts found: what another writer forgot,
    // rejected or superseded since is left out, and the hold follows what is left.
    store.store_conflicts(&fact.record.id, &found, true, by)?;
    store.semantic().get(&fact.record.id)
}

/// Finds `fact`'s conflicts ([`conflicts_with`]) and stores them with it (replacing what an
/// earlier detection stored; a `conflict` ledger row by `by` when there are any); `fact`
/// answers them as stored (a fact no longer current by then is left out: [`store`]). The re-check after a validation: it never quarantines (a new fact is
/// remembered with [`remember`]). A held supersession (its quarantine reason, kept by the
/// validation, names one: [`is_supersede_hold`]) keeps the facts it would supersede that
/// are still current, whatever its predicate, so a person's validation leaves
/// the decision open (nobody else validates it: [`check_validator`]).
pub fn detect<S: MemoryStore>(
    store: &S,
    fact: &mut Fact,
    extra: &[String],
    by: Actor,
) -> Result<()> {
    let mut found = conflicts_with(store, fact, extra)?;
    let held = fact
        .trust
        .quarantine_reason
        .as_deref()
        .is_some_and(is_supersede_hold);
    if held {
        for id in &fact.conflicts_with {
            let old = store.semantic().get(id)?;
            let current = old.record.deleted_at.is_none() && old.superseded_by.is_none();
            if current && !found.contains(id) {
                found.insert(0, id.clone());
            }
        }
    }
    if found.is_empty() && fact.conflicts_with.is_empty() {
        return Ok(());
    }
    fact.conflicts_with = store.store_conflicts(&fact.record.id, &found, false, by)?;
    fact.conflict_decision = None;
    Ok(())
}

/// Stores the conflicts of fact `row` with `olds` (the rows found, read in the caller's
/// write transaction), with a `conflict` ledger row when there are any; answers the ids
/// stored. Only the facts of `olds` still current are kept — one forgotten, rejected or
/// superseded since it was found (another writer's act between the check and this
/// transaction) is no conflict any more; none left clears them.
///
/// With `hold` (a fact just remembered, not one a person validated), a fact whose
/// provenance is not a person's ([`held_on_conflict`]) follows what is left: held for it
/// (an active fact moves to quarantine, a held one's reason is rewritten when the facts
/// it contradicts changed, each with a `quarantine` ledger row), or, held before the
/// write for facts none of which is current any more, released to what the trust gate
/// decides ([`release`]).
pub(crate) fn store(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    row: &ItemRow,
    olds: &[ItemRow],
    hold: bool,
    by: Actor,
) -> Result<Vec<String>> {
    if row.kind() != Some(MemoryKind::Semantic) {
        return Err(MemoryError::invalid(
            "id",
            format!("{} is not a fact", row.id),
        ));
    }
    let with: Vec<String> = olds
        .iter()
        .filter(|o| o.deleted_at.is_none() && o.superseded_by.is_none())
        .map(|o| o.id.clone())
        .collect();
    let held_before = row.status() == MemoryStatus::Quarantined
        && row
            .quarantine_reason
            .as_deref()
            .is_some_and(|r| r.contains(CONTRADICTION_HOLD_PREFIX));
    if with.is_empty() {
        w.set_conflicts(row.rowid, None)?;
        if hold && held_before {
            release(w, now, row, by)?;
        }
        return Ok(with);
    }
    let ids = serde_json::to_string(&with)
        .map_err(|e| MemoryError::Conflict(format!("conflicts of {}: {e}", row.id)))?;
    w.set_conflicts(row.rowid, Some(&ids))?;
    w.ledger(
        now,
        &row.id,
        "conflict",
        by,
        None,
        Some(json!({ "conflictsWith": with })),
    )?;
    if !hold || !held_on_conflict(row.provenance()) {
        return Ok(with);
    }
    let reason = match trust::gate(row.provenance(), &index_text(row)).reason {
        Some(own) if held_before => format!("{own}; {}", hold_reason(&with)),
        _ => hold_reason(&with),
    };
    let stale = held_before && row.quarantine_reason.as_deref() != Some(reason.as_str());
    if row.status() == MemoryStatus::Active || stale {
        w.quarantine(row.rowid, &reason)?;
        w.ledger(
            now,
            &row.id,
            "quarantine",
            by,
            Some(&reason),
            Some(json!({ "conflictsWith": with })),
        )?;
    }
    Ok(with)
}

/// Releases fact `row`, held before its write for facts none of which is current any more
/// ([`store`]): it stands as the trust gate decides on its provenance and text — active
/// (a `release` ledger row naming the stale reason), or still quarantined for the gate's
/// own reasons alone (a `quarantine` row with them).
fn release(w: &mut (impl ItemWrites + ?Sized), now: i64, row: &ItemRow, by: Actor) -> Result<()> {
    let stale = row.quarantine_reason.clone().unwrap_or_default();
    let verdict = trust::gate(row.provenance(), &index_text(row));
    let why = format!("no longer current: {stale}");
    match verdict.reason {
        None => {
            w.release(row.rowid, now)?;
            w.ledger(
                now,
                &row.id,
                "release",
                by,
                Some(&why),
                Some(json!({ "conflictsWith": [] })),
            )
        }
        Some(own) => {
            w.quarantine(row.rowid, &own)?;
            w.ledger(
                now,
                &row.id,
                "quarantine",
                by,
                Some(&own),
                Some(json!({ "conflictsWith": [], "was": stale })),
            )
        }
    }
}

/// Refuses the validation of fact `row` by any actor but a person (`by` not `user`: an
/// agent the operator lets validate, MCP `--allow-validate`, or maintenance) while its
/// conflicts wait for a decision — a contradiction held back by [`remember`], a held
/// supersession of a person's fact ([`held_on_supersede`]) or one held until validated:
/// validating it would make it an answer beside (or over) the fact it contradicts, which is
/// the person's "keep both" decided by someone else. The fact stays as it is and the error
/// says a person must decide. A record without an open conflict, and any record a person
/// validates, pass.
pub(crate) fn check_validator(row: &ItemRow, by: Actor) -> Result<()> {
    let quarantined = row.status() == MemoryStatus::Quarantined;
    if by == Actor::User || !quarantined || row.conflict_decision_json.is_some() {
        return Ok(());
    }
    let with = row.conflicts_with();
    if with.is_empty() {
        return Ok(());
    }
    let reason = row.quarantine_reason.as_deref().unwrap_or_default();
    let what = if reason.contains(SUPERSEDE_HOLD_PREFIX) {
        SUPERSEDE_HOLD_PREFIX
    } else if reason.contains(VALIDATION_HOLD_PREFIX) {
        VALIDATION_HOLD_PREFIX
    } else {
        "contradicts"
    };
    Err(MemoryError::invalid(
        "by",
        format!(
            "fact {} {what} {}: a person must decide (supersede the old one, keep both or \
             reject it in the viewer); validating it is a person's act while its conflict is \
             open, so it stays as it is",
            row.id,
            with.join(", ")
        ),
    ))
}

/// The open conflicts of fact `row`: the ids stored with it, none decided yet; refused
/// (a state conflict) when it has none, is gone, or was decided.
pub(crate) fn open_conflicts(row: &ItemRow) -> Result<Vec<String>> {
    let id = &row.id;
    if row.kind() != Some(MemoryKind::Semantic) {
        return Err(MemoryError::invalid("id", format!("{id} is not a fact")));
    }
    if row.deleted_at.is_some() {
        return Err(MemoryError::Conflict(format!("fact {id} is deleted")));
    }
    if let Some(by) = &row.superseded_by {
        return Err(MemoryError::Conflict(format!(
            "fact {id} is already superseded by {by}"
        )));
    }
    if row.conflict_decision_json.is_some() {
        return Err(MemoryError::Conflict(format!(
            "the conflicts of fact {id} are already decided"
        )));
    }
    let with = row.conflicts_with();
    if with.is_empty() {
        return Err(MemoryError::Conflict(format!(
            "fact {id} has no open conflict"
        )));
    }
    Ok(with)
}

/// A person's decision on fact `new`'s open conflicts with `olds` (the stored rows its
/// `conflictsWith` names), in the caller's write transaction:
///
/// - `supersede_old`: `new` is validated when quarantined (the trust gate's re-check:
///   flagged text only with `force`), and every one of `olds` still current is superseded
///   by it with the supersede rule's links and ledger rows; `new` names the newest of them
///   as the version it supersedes unless it already supersedes one;
/// - `keep_both`: `new` is validated when quarantined; both stay active;
/// - `reject`: `new` is rejected (a tombstone with `reason`, or one naming the conflict).
///
/// The decision is stored with `new` and a `conflict.decide` ledger row is written for
/// `new` and for each of `olds`. Only a person decides: any other actor is refused.
pub(crate) fn decide(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    (new, olds): (&ItemRow, &[ItemRow]),
    args: &DecideArgs,
    by: Actor,
) -> Result<ConflictDecided> {
    let DecideArgs {
        decision,
        reason,
        force,
    } = args;
    let (decision, force) = (*decision, *force);
    if by != Actor::User {
        return Err(MemoryError::invalid(
            "by",
            "deciding a conflict is a person's act (an agent or maintenance may not)",
        ));
    }
    let with = open_conflicts(new)?;
    let default_reason = format!("{}: contradicts {}", decision, with.join(", "));
    let reason = reason
        .as_deref()
        .filter(|r| !r.trim().is_empty())
        .unwrap_or(default_reason.as_str());
    match decision {
        ConflictDecision::SupersedeOld => {
            validate_if_quarantined(w, now, new, force, by)?;
            let current: Vec<&ItemRow> = olds
                .iter()
                .filter(|o| o.deleted_at.is_none() && o.superseded_by.is_none())
                .collect();
            for old in &current {
                link_supersession(w, now, old, &new.id, reason, by)?;
            }
            if let (None, Some(newest)) = (&new.supersedes, current.last()) {
                w.set_supersedes(new.rowid, &newest.id, now)?;
            }
        }
        ConflictDecision::KeepBoth => validate_if_quarantined(w, now, new, force, by)?,
        ConflictDecision::Reject => {
            check_reject_reason(reason)?;
            tombstone(w, now, new, "reject", reason, by)?;
        }
    }
    let decided = ConflictDecided {
        decision,
        with: with.clone(),
        at: format_ms(now),
        by,
    };
    let stored = serde_json::to_string(&decided)
        .map_err(|e| MemoryError::Conflict(format!("decision on {}: {e}", new.id)))?;
    w.set_conflict_decision(new.rowid, &stored, now)?;
    let detail = json!({ "decision": decision, "fact": new.id, "with": with });
    w.ledger(
        now,
        &new.id,
        "conflict.decide",
        by,
        Some(reason),
        Some(detail.clone()),
    )?;
    for old in olds {
        w.ledger(
            now,
            &old.id,
            "conflict.decide",
            by,
            Some(reason),
            Some(detail.clone()),
        )?;
    }
    Ok(decided)
}

fn validate_if_quarantined(
    w: &mut (impl ItemWrites + ?Sized),
    now: i64,
    row: &ItemRow,
    force: bool,
    by: Actor,
) -> Result<()> {
    if row.status() == MemoryStatus::Active {
        return Ok(());
    }
    validate(w, now, row, force, by)
}
