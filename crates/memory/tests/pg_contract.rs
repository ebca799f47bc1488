//! The contract suite against the PostgreSQL backend, unchanged: each test gets its own
//! schema in the database `MINDGATE_TEST_POSTGRES_URL` names (dropped when the store is),
//! so the tests run in parallel. Without the variable every test prints `skipped: <why>`
//! (and fails when `MINDGATE_TEST_REQUIRE_SERVICES=1`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod contract;

use std::sync::Arc;

use mindgate_memory::time::ManualClock;
use mindgate_memory::*;

use mindgate_pg::PostgresUrl;
use mindgate_testkit::PgSchema;

fn pg(url: &str) -> PostgresUrl {
    PostgresUrl::parse(url).unwrap()
}

/// Whether the test PostgreSQL is set (else the case says `skipped: <why>`).
fn available() -> bool {
    mindgate_testkit::services::postgres_url().is_some()
}

/// A store in a fresh schema, dropped with it.
struct SchemaStore {
    store: PgMemory,
    schema: PgSchema,
}

fn make(clock: Arc<ManualClock>) -> SchemaStore {
    let schema = PgSchema::create("mgtest").expect("the test PostgreSQL");
    let store = connect(schema.url(), clock);
    SchemaStore { store, schema }
}

/// The store in the schema at `url`, opened (and migrated) with the test clock and embedder.
fn connect(url: &str, clock: Arc<ManualClock>) -> PgMemory {
    PgMemory::connect(
        &pg(url),
        OpenOptions::default()
            .clock(clock)
            .embedder(Arc::new(common::TestEmbedder::new())),
    )
    .unwrap()
}

impl MemoryStore for SchemaStore {
    fn working(&self) -> impl WorkingMemory + '_ {
        self.store.working()
    }
    fn session(&self) -> impl SessionMemory + '_ {
        self.store.session()
    }
    fn episodic(&self) -> impl EpisodicMemory + '_ {
        self.store.episodic()
    }
    fn semantic(&self) -> impl SemanticMemory + '_ {
        self.store.semantic()
    }
    fn procedural(&self) -> impl ProceduralMemory + '_ {
        self.store.procedural()
    }
    fn shared(&self) -> impl SharedMemory + '_ {
        self.store.shared()
    }
    fn insights(&self) -> impl InsightMemory + '_ {
        self.store.insights()
    }
    fn entities(&self) -> impl EntityGraph + '_ {
        self.store.entities()
    }
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        self.store.search(options)
    }
    fn get_item(&self, id: &str) -> Result<MemoryItem> {
        self.store.get_item(id)
    }
    fn validate(&self, id: &str, force: bool, by: Actor) -> Result<MemoryItem> {
        self.store.validate(id, force, by)
    }
    fn reject(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        self.store.reject(id, reason, by)
    }
    fn store_conflicts(
        &self,
        id: &str,
        with: &[String],
        hold: bool,
        by: Actor,
    ) -> Result<Vec<String>> {
        self.store.store_conflicts(id, with, hold, by)
    }
    fn decide_conflict(&self, id: &str, args: &DecideArgs, by: Actor) -> Result<ConflictOutcome> {
        self.store.decide_conflict(id, args, by)
    }
    fn ledger(&self, subject_id: &str) -> Result<Vec<HistoryEntry>> {
        self.store.ledger(subject_id)
    }
    fn metadata(&self, user_id: &str) -> Result<MemoryMetadata> {
        self.store.metadata(user_id)
    }
}

contract_suite!(make, skip_unless: available);

#[test]
fn fact_at_names_believed_and_valid() {
    if available() {
        contract::fact_at_names_believed_and_valid(&make, &|s, id, as_of, known_at| {
            s.store.fact_at(id, as_of, known_at)
        });
    }
}

#[test]
fn search_agrees_with_belief_at_every_instant() {
    if available() {
        contract::search_agrees_with_belief_at_every_instant(
            &make,
            &|s, id, as_of, known_at| s.store.fact_at(id, as_of, known_at),
            0x5eed_0002,
            12,
            14,
        );
    }
}

/// Beyond the contract: what only a shared database has.
mod postgres_only {
    use super::*;

    #[test]
    fn an_unreachable_server_is_a_clear_error() {
        // A port nothing listens on: bind one, note it, close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("postgres://mindgate:secret@127.0.0.1:{port}/memory");
        let err = PgMemory::connect(&pg(&url), OpenOptions::default()).unwrap_err();
        assert!(
            matches!(err, MemoryError::PostgresConnect { .. }),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains(&format!("127.0.0.1:{port}/memory")), "{text}");
        assert!(
            !text.contains("secret"),
            "the password is never shown: {text}"
        );
        assert_eq!(err.code(), mindgate_errors::ErrorCode::Unavailable);
        let bad = PostgresUrl::parse("postgres://127.0.0.1:notaport/x").unwrap_err();
        assert!(
            bad.to_string().contains("not a usable PostgreSQL URL"),
            "{bad}"
        );
    }

    #[test]
    fn two_instances_on_one_database_see_each_others_writes() {
        if !available() {
            return;
        }
        let clock = Arc::new(ManualClock::at(common::T0));
        let a = make(clock.clone());
        let b = PgMemory::connect(
            &pg(a.schema.url()),
            OpenOptions::default()
                .clock(clock)
                .embedder(Arc::new(common::TestEmbedder::new())),
        )
        .unwrap();
        // B searches first, so its vector mirror exists before A writes.
        let query = MemorySearchOptions::new("u1", "violin lesson Tuesday");
        assert!(b.search(&query).unwrap().is_empty());
        let fact = a
            .semantic()
            .remember(NewFact::new(
                Scope::user("u1"),
                "Ana's violin lesson is on Tuesday",
            ))
            .unwrap();
        let mut vector_only = query.clone();
        vector_only.mode = Some(SearchMode::Vector);
        for options in [&query, &vector_only] {
            let hits = b.search(options).unwrap();
            assert_eq!(
                hits.iter().map(|h| h.record.id()).collect::<Vec<_>>(),
                vec![fact.record.id.as_str()],
                "{:?}",
                options.mode
            );
        }
        // A write on B is refereed by the same rules A sees: a duplicate id is refused.
        let mut dup = NewFact::new(Scope::user("u1"), "again");
        dup.meta.id = Some(fact.record.id.clone());
        assert!(matches!(
            b.semantic().remember(dup),
            Err(MemoryError::Duplicate(_))
        ));
        b.semantic()
            .forget(&fact.record.id, "wrong day", Actor::User)
            .unwrap();
        assert!(a.search(&query).unwrap().is_empty());
    }

    /// A store made by migration 3 (before the neighbour index) gets it from migration 4
    /// when opened, and search answers as before.
    #[test]
    fn a_migration_3_store_gets_the_neighbour_index_and_answers_the_same() {
        if !available() {
            return;
        }
        let clock = Arc::new(ManualClock::at(common::T0));
        let SchemaStore { store, schema } = make(clock.clone());
        for (session, text, id) in [
            ("trip", "Ada: should we take the ferry to Bergen?", "ask"),
            ("work", "Bo: the quarterly numbers look fine", "work"),
            ("trip", "Bo: done, booked it for Friday at nine", "booked"),
            ("trip", "Ada: great, I will pack tonight", "pack"),
        ] {
            let mut f = NewFact::new(Scope::user("u1").with_session(session), text);
            f.meta.id = Some(id.to_owned());
            store.semantic().remember(f).unwrap();
        }
        let mut question = MemorySearchOptions::new("u1", "When is the ferry to Bergen?");
        question.mode = Some(SearchMode::Lexical);
        let hits = |s: &PgMemory| -> Vec<(String, String)> {
            s.search(&question)
                .unwrap()
                .iter()
                .map(|h| (h.record.id().to_owned(), format!("{:.9}", h.score)))
                .collect()
        };
        let before = hits(&store);
        let found: Vec<&str> = before.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(found, vec!["ask", "booked", "pack"]);
        drop(store);

        let mut client = mindgate_testkit::pg_client(schema.url());
        let has_index = |client: &mut ::postgres::Client| {
            client
                .query_opt(
                    "SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'memory_items_neighbours'",
                    &[&schema.name()],
                )
                .unwrap()
                .is_some()
        };
        // The schema as migration 3 left it: the same tables, no neighbour index.
        client
            .batch_execute(
                "DROP INDEX memory_items_neighbours; DELETE FROM memory_schema WHERE version > 3;",
            )
            .unwrap();
        assert!(!has_index(&mut client));

        let store = super::connect(schema.url(), clock);
        assert!(has_index(&mut client), "migration 4 adds the index");
        let version: i64 = client
            .query_one("SELECT MAX(version) FROM memory_schema", &[])
            .unwrap()
            .get(0);
        assert_eq!(version, mindgate_memory::postgres::SCHEMA_VERSION);
        assert_eq!(hits(&store), before);
    }

    #[test]
    fn a_scratch_store_drops_its_schema() {
        if !available() {
            return;
        }
        let url = mindgate_testkit::services::postgres_url().unwrap();
        let store = PgMemory::connect_scratch(&pg(&url), OpenOptions::default()).unwrap();
        let schema = store.scratch_schema().unwrap().to_owned();
        store
            .semantic()
            .remember(NewFact::new(Scope::user("u1"), "scratch"))
            .unwrap();
        let mut admin = mindgate_testkit::pg_client(&url);
        let exists = |admin: &mut ::postgres::Client| {
            admin
                .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
                .unwrap()
                .is_some()
        };
        assert!(exists(&mut admin));
        drop(store);
        assert!(!exists(&mut admin), "dropped with the store");
    }

    #[test]
    fn a_dropped_connection_is_reopened() {
        if !available() {
            return;
        }
        let clock = Arc::new(ManualClock::at(common::T0));
        let a = make(clock.clone());
        let app = format!("mg_{}", a.schema.name());
        let scoped = format!("{}&application_name={app}", a.schema.url());
        let b = PgMemory::connect(&pg(&scoped), OpenOptions::default().clock(clock)).unwrap();
        let fact = b
            .semantic()
            .remember(NewFact::new(
                Scope::user("u1"),
                "Ana's violin lesson is on Tuesday",
            ))
            .unwrap();
        let mut admin = mindgate_testkit::pg_client(a.schema.admin_url());
        let killed: i64 = admin
            .query_one(
                "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = $1) t",
                &[&app],
            )
            .unwrap()
            .get(0);
        assert_eq!(killed, 1, "the store's one connection");
        // Calls made before the client sees the connection closed fail; then it reconnects
        // by itself (no new store, no restart).
        let again = mindgate_testkit::wait::until(
            "the store to reconnect",
            std::time::Duration::from_secs(10),
            || b.semantic().get(&fact.record.id).ok(),
        );
        assert_eq!(again.record.id, fact.record.id);
        let reconnected: i64 = admin
            .query_one(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1",
                &[&app],
            )
            .unwrap()
            .get(0);
        assert_eq!(reconnected, 1, "one new connection");
    }
}
