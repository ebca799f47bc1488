//! Conflicts surfaced (issue 28, item 3), on every backend: a fact with a single-valued
//! predicate conflicts with the active fact of the same user, same subject (after entity
//! resolution) and another object; not with itself, the version it supersedes, a
//! multi-valued predicate, a quarantined or superseded fact, another user's fact, or an
//! object that resolves to the same entity.

use std::sync::Arc;

use mindgate_memory::rules::conflicts::{conflicts_with, is_single_valued};
use mindgate_memory::time::ManualClock;
use mindgate_memory::*;

use super::setup;

fn triple(user: &str, text: &str, s: &str, p: &str, o: &str) -> NewFact {
    let mut f = NewFact::new(Scope::user(user), text);
    f.subject = Some(s.into());
    f.predicate = Some(p.into());
    f.object = Some(o.into());
    f
}

pub fn single_valued_facts_conflict<S: MemoryStore>(make: &dyn Fn(Arc<ManualClock>) -> S) {
    let (s, _) = setup(make);
    let window = s
        .semantic()
        .remember(triple(
            "u1",
            "Ana prefers window seats",
            "Ana",
            "seat_preference",
            "window",
        ))
        .unwrap();
    assert!(
        conflicts_with(&s, &window, &[]).unwrap().is_empty(),
        "alone"
    );
    let mut derived = triple(
        "u1",
        "Ana prefers aisle seats",
        "ana",
        "seat preference",
        "aisle",
    );
    derived.meta.provenance = Some(MemoryProvenance::Extraction);
    let aisle = s.semantic().remember(derived).unwrap();
    assert_eq!(
        conflicts_with(&s, &aisle, &[]).unwrap(),
        vec![window.record.id.clone()],
        "folded subject and predicate"
    );
    // The quarantined one is not an active fact: the window fact conflicts with nothing.
    assert!(conflicts_with(&s, &window, &[]).unwrap().is_empty());
    // The same object, another user, a multi-valued predicate: no conflict.
    let again = s
        .semantic()
        .remember(triple(
            "u1",
            "Ana likes the window seat",
            "Ana",
            "seat_preference",
            "Window",
        ))
        .unwrap();
    assert!(conflicts_with(&s, &again, &[]).unwrap().is_empty());
    let other = s
        .semantic()
        .remember(triple(
            "u2",
            "Ana prefers aisle seats",
            "Ana",
            "seat_preference",
            "aisle",
        ))
        .unwrap();
    assert!(conflicts_with(&s, &other, &[]).unwrap().is_empty());
    let likes = s
        .semantic()
        .remember(triple("u1", "Ana likes jazz", "Ana", "likes", "jazz"))
        .unwrap();
    s.semantic()
        .remember(triple("u1", "Ana likes tea", "Ana", "likes", "tea"))
        .unwrap();
    assert!(conflicts_with(&s, &likes, &[]).unwrap().is_empty());
    // A predicate made single-valued by configuration.
    let coffee = s
        .semantic()
        .remember(triple("u1", "Ana likes coffee", "Ana", "likes", "coffee"))
        .unwrap();
    let found = conflicts_with(&s, &coffee, &["likes".to_owned()]).unwrap();
    assert_eq!(found.len(), 2, "jazz and tea: {found:?}");
    assert!(is_single_valued("Lives-In", &[]) && !is_single_valued("likes", &[]));
}

pub fn supersession_and_aliases_are_not_conflicts<S: MemoryStore>(
    make: &dyn Fn(Arc<ManualClock>) -> S,
) {
    let (s, _) = setup(make);
    let oslo = s
        .semantic()
        .remember(triple("u1", "Ana lives in Oslo", "Ana", "lives_in", "Oslo"))
        .unwrap();
    let bergen = s
        .semantic()
        .supersede(
            &oslo.record.id,
            triple("u1", "Ana lives in Bergen", "Ana", "lives_in", "Bergen"),
            "moved",
        )
        .unwrap();
    assert!(
        conflicts_with(&s, &bergen, &[]).unwrap().is_empty(),
        "the version it replaces"
    );
    // An object merged into the stored one is the same entity.
    let by_alias = s
        .semantic()
        .remember(triple(
            "u1",
            "Ana lives in Bjørgvin",
            "Ana",
            "lives_in",
            "Bjørgvin",
        ))
        .unwrap();
    assert_eq!(
        conflicts_with(&s, &by_alias, &[]).unwrap(),
        vec![bergen.record.id.clone()],
        "before the merge another entity"
    );
    let entities = s.entities().list("u1").unwrap();
    let id_of = |name: &str| {
        entities
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.id.clone())
            .unwrap()
    };
    s.entities()
        .merge(&id_of("Bjørgvin"), &id_of("Bergen"), Actor::User)
        .unwrap();
    assert!(
        conflicts_with(&s, &by_alias, &[]).unwrap().is_empty(),
        "an alias"
    );
}
