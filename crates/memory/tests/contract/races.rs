//! The conflict rule against a concurrent writer (issue 28, item 3), on every backend and
//! without sleeps: [`Interleaved`] runs another writer's act at an exact point of the
//! rule — just before the fact is written, or just before its conflicts are stored — so
//! the conflicts the rule found before that point may have gone stale (the fact they name
//! forgotten, rejected or superseded in between). What is stored must answer the state at
//! the write: no `conflictsWith` naming a fact that is no longer current, no quarantine
//! reason naming a contradiction that is gone, no fact held for a contradiction that no
//! longer exists.

use std::cell::RefCell;
use std::sync::Arc;

use mindgate_memory::rules::conflicts::{self, detect};
use mindgate_memory::time::ManualClock;
use mindgate_memory::*;

use super::{search, setup};

type Act<'a, S> = Box<dyn FnOnce(&S) + 'a>;

/// A store whose next fact write (`remember`, `remember_quarantined`) and next
/// `store_conflicts` each first run a concurrent writer's act (once).
pub struct Interleaved<'a, S> {
    inner: &'a S,
    before_write: RefCell<Option<Act<'a, S>>>,
    before_store: RefCell<Option<Act<'a, S>>>,
}

impl<'a, S: MemoryStore> Interleaved<'a, S> {
    fn new(inner: &'a S) -> Self {
        Self {
            inner,
            before_write: RefCell::new(None),
            before_store: RefCell::new(None),
        }
    }

    fn before_write(self, act: impl FnOnce(&S) + 'a) -> Self {
        *self.before_write.borrow_mut() = Some(Box::new(act));
        self
    }

    fn before_store(self, act: impl FnOnce(&S) + 'a) -> Self {
        *self.before_store.borrow_mut() = Some(Box::new(act));
        self
    }

    fn run(&self, slot: &RefCell<Option<Act<'a, S>>>) {
        let act = slot.borrow_mut().take();
        if let Some(act) = act {
            act(self.inner);
        }
    }
}

/// The semantic tier of an [`Interleaved`] store.
pub struct Semantic<'b, 'a, S>(&'b Interleaved<'a, S>);

impl<S: MemoryStore> SemanticMemory for Semantic<'_, '_, S> {
    fn remember(&self, fact: NewFact) -> Result<Fact> {
        self.0.run(&self.0.before_write);
        self.0.inner.semantic().remember(fact)
    }
    fn remember_many_unchecked(&self, facts: Vec<NewFact>) -> Result<Vec<Fact>> {
        self.0.run(&self.0.before_write);
        self.0.inner.semantic().remember_many_unchecked(facts)
    }
    fn remember_quarantined(&self, fact: NewFact, reason: &str) -> Result<Fact> {
        self.0.run(&self.0.before_write);
        self.0.inner.semantic().remember_quarantined(fact, reason)
    }
    fn get(&self, id: &str) -> Result<Fact> {
        self.0.inner.semantic().get(id)
    }
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.0.inner.semantic().search(options)
    }
    fn supersede(&self, old_id: &str, new: NewFact, reason: &str) -> Result<Fact> {
        self.0.inner.semantic().supersede(old_id, new, reason)
    }
    fn forget(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        self.0.inner.semantic().forget(id, reason, by)
    }
    fn history(&self, id: &str) -> Result<FactHistory> {
        self.0.inner.semantic().history(id)
    }
}

impl<S: MemoryStore> MemoryStore for Interleaved<'_, S> {
    fn working(&self) -> impl WorkingMemory + '_ {
        self.inner.working()
    }
    fn session(&self) -> impl SessionMemory + '_ {
        self.inner.session()
    }
    fn episodic(&self) -> impl EpisodicMemory + '_ {
        self.inner.episodic()
    }
    fn semantic(&self) -> impl SemanticMemory + '_ {
        Semantic(self)
    }
    fn procedural(&self) -> impl ProceduralMemory + '_ {
        self.inner.procedural()
    }
    fn shared(&self) -> impl SharedMemory + '_ {
        self.inner.shared()
    }
    fn insights(&self) -> impl InsightMemory + '_ {
        self.inner.insights()
    }
    fn entities(&self) -> impl EntityGraph + '_ {
        self.inner.entities()
    }
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.inner.search(options)
    }
    fn get_item(&self, id: &str) -> Result<MemoryItem> {
        self.inner.get_item(id)
    }
    fn validate(&self, id: &str, force: bool, by: Actor) -> Result<MemoryItem> {
        self.inner.validate(id, force, by)
    }
    fn reject(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        self.inner.reject(id, reason, by)
    }
    fn store_conflicts(
        &self,
        id: &str,
        with: &[String],
        hold: bool,
        by: Actor,
    ) -> Result<Vec<String>> {
        self.run(&self.before_store);
        self.inner.store_conflicts(id, with, hold, by)
    }
    fn decide_conflict(&self, id: &str, args: &DecideArgs, by: Actor) -> Result<ConflictOutcome> {
        self.inner.decide_conflict(id, args, by)
    }
    fn ledger(&self, subject_id: &str) -> Result<Vec<HistoryEntry>> {
        self.inner.ledger(subject_id)
    }
    fn metadata(&self, user_id: &str) -> Result<MemoryMetadata> {
        self.inner.metadata(user_id)
    }
}

fn lives(text: &str, city: &str, provenance: MemoryProvenance) -> NewFact {
    let mut f = NewFact::new(Scope::user("u1"), text);
    f.subject = Some("Ana".into());
    f.predicate = Some("lives_in".into());
    f.object = Some(city.into());
    f.meta.provenance = Some(provenance);
    f.meta.by = if provenance == MemoryProvenance::User {
        Actor::User
    } else {
        Actor::Agent
    };
    f
}

fn persons<S: MemoryStore>(s: &S, text: &str, city: &str) -> String {
    conflicts::remember(s, lives(text, city, MemoryProvenance::User), &[])
        .unwrap()
        .record
        .id
}

/// The contradicted fact is forgotten, rejected or superseded between the rule's check and
/// the write: the agent's fact holds for nothing, so it lands as the trust gate decides
/// (active), with no stale reason or conflict; superseded by a person's new version, the
/// fact is held for that version, its reason naming it.
pub fn conflicts_stale_before_the_write_are_not_kept<S: MemoryStore>(
    make: &dyn Fn(Arc<ManualClock>) -> S,
) {
    let (s, _) = setup(make);
    let oslo = persons(&s, "Ana lives in Oslo", "Oslo");
    let forgotten = oslo.clone();
    let racing = Interleaved::new(&s).before_write(move |s: &S| {
        s.semantic()
            .forget(&forgotten, "moved away", Actor::User)
            .unwrap();
    });
    let bergen = conflicts::remember(
        &racing,
        lives("Ana lives in Bergen", "Bergen", MemoryProvenance::Agent),
        &[],
    )
    .unwrap();
    let read = s.semantic().get(&bergen.record.id).unwrap();
    assert_eq!(read.record.state, RecordState::Active, "{read:?}");
    assert_eq!(read.trust.quarantine_reason, None);
    assert!(read.conflicts_with.is_empty(), "{:?}", read.conflicts_with);
    assert_eq!(bergen.record.state, RecordState::Active, "as answered");
    assert_eq!(search(&s, "Ana lives"), vec![bergen.record.id.clone()]);
    let ledger = s.ledger(&bergen.record.id).unwrap();
    let release = ledger.iter().find(|e| e.action == "release").unwrap();
    assert!(
        release.reason.as_deref().unwrap().contains(&oslo),
        "{release:?}"
    );

    // Superseded in between by a person's new version: held for that one, named.
    let rome = persons(&s, "Ana lives in Rome", "Rome");
    let old = rome.clone();
    let paris = RefCell::new(String::new());
    let racing = Interleaved::new(&s).before_write(|s: &S| {
        let new = s
            .semantic()
            .supersede(
                &old,
                lives("Ana lives in Paris", "Paris", MemoryProvenance::User),
                "moved",
            )
            .unwrap();
        *paris.borrow_mut() = new.record.id;
    });
    let lima = conflicts::remember(
        &racing,
        lives("Ana lives in Lima", "Lima", MemoryProvenance::Agent),
        &[],
    )
    .unwrap();
    drop(racing);
    let paris = paris.into_inner();
    assert!(!paris.is_empty());
    let read = s.semantic().get(&lima.record.id).unwrap();
    assert_eq!(read.record.state, RecordState::Quarantined);
    let mut with = read.conflicts_with.clone();
    with.sort();
    let mut expect = vec![bergen.record.id.clone(), paris.clone()];
    expect.sort();
    assert_eq!(with, expect);
    let reason = read.trust.quarantine_reason.unwrap();
    assert!(!reason.contains(&rome), "stale: {reason}");
    assert!(reason.starts_with("contradicts active facts "), "{reason}");
    assert!(
        reason.contains(&paris) && reason.contains(&bergen.record.id),
        "{reason}"
    );
}

/// The contradicted fact is rejected between the check after the write and the
/// transaction that stores the conflicts, or forgotten between a validation's re-check and
/// its store: the stored conflicts leave it out (none left: the fact just remembered is not
/// held for it), and `detect` answers what was stored.
pub fn conflicts_stale_before_they_are_stored_are_dropped<S: MemoryStore>(
    make: &dyn Fn(Arc<ManualClock>) -> S,
) {
    let (s, _) = setup(make);
    let oslo = persons(&s, "Ana lives in Oslo", "Oslo");
    let rejected = oslo.clone();
    let racing = Interleaved::new(&s).before_store(move |s: &S| {
        s.reject(&rejected, "never lived there", Actor::User)
            .unwrap();
    });
    let bergen = conflicts::remember(
        &racing,
        lives("Ana lives in Bergen", "Bergen", MemoryProvenance::Agent),
        &[],
    )
    .unwrap();
    let read = s.semantic().get(&bergen.record.id).unwrap();
    assert!(read.conflicts_with.is_empty(), "{:?}", read.conflicts_with);
    assert_eq!(read.record.state, RecordState::Active, "{read:?}");
    assert_eq!(read.trust.quarantine_reason, None);

    // A person validates a held fact; the fact it contradicts is forgotten before the
    // re-check's conflicts are stored.
    let rome = persons(&s, "Ana lives in Rome", "Rome");
    let mut derived = lives("Ana lives in Lima", "Lima", MemoryProvenance::Extraction);
    derived.meta.by = Actor::Agent;
    let lima = conflicts::remember(&s, derived, &[]).unwrap();
    assert_eq!(lima.record.state, RecordState::Quarantined);
    let MemoryItem::Fact(mut validated) = s.validate(&lima.record.id, false, Actor::User).unwrap()
    else {
        panic!("a fact");
    };
    let forgotten = rome.clone();
    let racing = Interleaved::new(&s).before_store(move |s: &S| {
        s.semantic()
            .forget(&forgotten, "moved away", Actor::User)
            .unwrap();
    });
    detect(&racing, &mut validated, &[], Actor::User).unwrap();
    let others: Vec<String> = validated
        .conflicts_with
        .iter()
        .filter(|id| **id != bergen.record.id)
        .cloned()
        .collect();
    assert!(
        others.is_empty(),
        "answered: {:?}",
        validated.conflicts_with
    );
    let read = s.semantic().get(&lima.record.id).unwrap();
    assert_eq!(read.conflicts_with, validated.conflicts_with, "as stored");
    assert!(!read.conflicts_with.contains(&rome));
}
