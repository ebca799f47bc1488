//! One handle on either backend, so the HTTP routes, the MCP tools and the CLI work on an
//! embedded SQLite file or a shared PostgreSQL database alike: [`MemoryDb`] says where the
//! store is (a `--memory-db` value), [`Memory`] is the open store. Every operation
//! delegates to the backend open; both backends have them all, the store-wide ones
//! (export / import, maintenance, consolidation, re-embedding) running the same rule code
//! ([`crate::transfer`], [`crate::maintenance`], [`crate::consolidate`],
//! [`crate::reembed`]).

use std::io::{BufRead, Write};

use crate::config::{FusionDefaults, MemoryConfig, OpenOptions};
use crate::error::Result;
use crate::maintenance::MaintenanceReport;
use crate::postgres::PgMemory;
use crate::reembed::ReembedProgress;
use crate::rules::belief::FactAt;
use crate::rules::consolidation::{ConsolidationBatch, ConsolidationWritten};
use crate::rules::listing::ItemFilter;
use crate::sqlite::SqliteMemory;
use crate::store::*;
use crate::transfer::TransferReport;
use crate::types::*;

/// Where a memory store lives: a SQLite file (the default `$MINDGATE_HOME/memory.db`) or
/// a PostgreSQL database; the run store's location type ([`mindgate_pg::Database`]).
pub use mindgate_pg::Database as MemoryDb;

/// An open memory store on either backend.
// Opened once per process and held behind an `Arc`: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Memory {
    /// The embedded SQLite store.
    Sqlite(SqliteMemory),
    /// The PostgreSQL store.
    Postgres(PgMemory),
}

impl From<SqliteMemory> for Memory {
    fn from(s: SqliteMemory) -> Self {
        Self::Sqlite(s)
    }
}

impl From<PgMemory> for Memory {
    fn from(p: PgMemory) -> Self {
        Self::Postgres(p)
    }
}

/// Runs the same expression on whichever backend is open.
macro_rules! either {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            Memory::Sqlite($s) => $e,
            Memory::Postgres($s) => $e,
        }
    };
}

impl Memory {
    /// Opens (creating and migrating) the store at `db`.
    pub fn open(db: &MemoryDb, options: OpenOptions) -> Result<Self> {
        Ok(match db {
            MemoryDb::Sqlite(path) => Self::Sqlite(SqliteMemory::open(path, options)?),
            MemoryDb::Postgres(url) => PgMemory::connect(url, options)?.into(),
        })
    }

    /// Opens the store at `db` without the embedder check, for re-embedding it with
    /// [`Memory::reembed`].
    pub fn open_for_reembed(db: &MemoryDb, options: OpenOptions) -> Result<Self> {
        Ok(match db {
            MemoryDb::Sqlite(path) => Self::Sqlite(SqliteMemory::open_for_reembed(path, options)?),
            MemoryDb::Postgres(url) => PgMemory::connect_for_reembed(url, options)?.into(),
        })
    }

    /// The SQLite store, when that is the backend.
    pub fn as_sqlite(&self) -> Option<&SqliteMemory> {
        match self {
            Self::Sqlite(s) => Some(s),
            Self::Postgres(_) => None,
        }
    }

    /// The backend's name: `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }

    /// The store's tunables.
    pub fn config(&self) -> &MemoryConfig {
        either!(self, s => s.config())
    }

    /// The fusion of a search whose options do not say.
    pub fn fusion_defaults(&self) -> FusionDefaults {
        either!(self, s => s.fusion_defaults())
    }

    /// The active embedder's id.
    pub fn embedder_id(&self) -> Option<&str> {
        either!(self, s => s.embedder_id())
    }

    /// The embedder the stored vectors belong to, if any.
    pub fn stored_embedder(&self) -> Result<Option<String>> {
        either!(self, s => s.stored_embedder())
    }

    /// Records matching `filter`, oldest first.
    pub fn list_items(&self, filter: &ItemFilter) -> Result<Vec<MemoryItem>> {
        either!(self, s => s.list_items(filter))
    }

    /// Live facts of a user (every user without one) whose conflicts wait for a person's
    /// decision (`conflictsWith` stored, none decided), oldest first.
    pub fn open_conflicts(
        &self,
        user_id: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<MemoryItem>> {
        self.list_items(&ItemFilter {
            user_id: user_id.map(str::to_owned),
            kind: Some(MemoryKind::Semantic),
            open_conflicts: true,
            limit,
            ..ItemFilter::default()
        })
    }

    /// The quarantine queue, oldest first.
    pub fn quarantine_queue(
        &self,
        user_id: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<MemoryItem>> {
        either!(self, s => s.quarantine_queue(user_id, limit))
    }

    /// Owners with any record, block or entity, sorted.
    pub fn users(&self) -> Result<Vec<String>> {
        either!(self, s => s.users())
    }

    /// Ledger rows after `after_seq`, at most `limit`, in order.
    pub fn ledger_since(&self, after_seq: i64, limit: usize) -> Result<Vec<HistoryEntry>> {
        either!(self, s => s.ledger_since(after_seq, limit))
    }

    /// The latest ledger position (0 for an empty store).
    pub fn ledger_head(&self) -> Result<i64> {
        either!(self, s => s.ledger_head())
    }

    /// Number of ledger rows (the whole store).
    pub fn ledger_len(&self) -> Result<i64> {
        either!(self, s => s.ledger_len())
    }

    /// Number of rows of every kind, live or not.
    pub fn row_count(&self) -> Result<i64> {
        either!(self, s => s.row_count())
    }

    /// A fact's versions believed at `known_at` and valid at `as_of`.
    pub fn fact_at(&self, id: &str, as_of: Option<&str>, known_at: Option<&str>) -> Result<FactAt> {
        either!(self, s => s.fact_at(id, as_of, known_at))
    }

    /// Decay and capacity eviction over one user's live facts ([`crate::maintenance`]).
    pub fn maintain(&self, user_id: &str) -> Result<MaintenanceReport> {
        either!(self, s => s.maintain(user_id))
    }

    /// The whole store as JSON Lines ([`crate::transfer`]; the same format on both
    /// backends).
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<TransferReport> {
        either!(self, s => s.export_jsonl(out))
    }

    /// Rows an export would write after its header.
    pub fn export_rows(&self) -> Result<u64> {
        either!(self, s => s.export_rows())
    }

    /// Whether the store holds nothing (no record, block, entity or ledger row).
    pub fn is_empty(&self) -> Result<bool> {
        either!(self, s => s.is_empty())
    }

    /// Reads an export (of either backend) into this empty store, in one transaction.
    pub fn import_jsonl(&self, input: &mut dyn BufRead) -> Result<TransferReport> {
        either!(self, s => s.import_jsonl(input))
    }

    /// Re-embeds every record with the active embedder ([`crate::reembed`]; open the
    /// store with [`Memory::open_for_reembed`]).
    pub fn reembed(&self, progress: impl FnMut(ReembedProgress)) -> Result<usize> {
        either!(self, s => s.reembed(progress))
    }

    pub(crate) fn consolidation_mark(
        &self,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<u64>> {
        either!(self, s => crate::tiers::consolidation_mark(s, user_id, session_id))
    }

    pub(crate) fn write_consolidation(
        &self,
        batch: ConsolidationBatch,
    ) -> Result<ConsolidationWritten> {
        either!(self, s => crate::tiers::write_consolidation(s, batch))
    }
}

impl MemoryStore for Memory {
    fn working(&self) -> impl WorkingMemory + '_ {
        either!(self, s => Box::new(s.working()) as Box<dyn WorkingMemory + '_>)
    }
    fn session(&self) -> impl SessionMemory + '_ {
        either!(self, s => Box::new(s.session()) as Box<dyn SessionMemory + '_>)
    }
    fn episodic(&self) -> impl EpisodicMemory + '_ {
        either!(self, s => Box::new(s.episodic()) as Box<dyn EpisodicMemory + '_>)
    }
    fn semantic(&self) -> impl SemanticMemory + '_ {
        either!(self, s => Box::new(s.semantic()) as Box<dyn SemanticMemory + '_>)
    }
    fn procedural(&self) -> impl ProceduralMemory + '_ {
        either!(self, s => Box::new(s.procedural()) as Box<dyn ProceduralMemory + '_>)
    }
    fn shared(&self) -> impl SharedMemory + '_ {
        either!(self, s => Box::new(s.shared()) as Box<dyn SharedMemory + '_>)
    }
    fn insights(&self) -> impl InsightMemory + '_ {
        either!(self, s => Box::new(s.insights()) as Box<dyn InsightMemory + '_>)
    }
    fn entities(&self) -> impl EntityGraph + '_ {
        either!(self, s => Box::new(s.entities()) as Box<dyn EntityGraph + '_>)
    }
    fn search(&self, options: &MemorySearchOptions) -> Result<Vec<MemoryHit>> {
        either!(self, s => s.search(options))
    }
    fn get_item(&self, id: &str) -> Result<MemoryItem> {
        either!(self, s => s.get_item(id))
    }
    fn validate(&self, id: &str, force: bool, by: Actor) -> Result<MemoryItem> {
        either!(self, s => s.validate(id, force, by))
    }
    fn reject(&self, id: &str, reason: &str, by: Actor) -> Result<()> {
        either!(self, s => s.reject(id, reason, by))
    }
    fn store_conflicts(
        &self,
        id: &str,
        with: &[String],
        hold: bool,
        by: Actor,
    ) -> Result<Vec<String>> {
        either!(self, s => s.store_conflicts(id, with, hold, by))
    }
    fn decide_conflict(&self, id: &str, args: &DecideArgs, by: Actor) -> Result<ConflictOutcome> {
        either!(self, s => s.decide_conflict(id, args, by))
    }
    fn ledger(&self, subject_id: &str) -> Result<Vec<HistoryEntry>> {
        either!(self, s => s.ledger(subject_id))
    }
    fn metadata(&self, user_id: &str) -> Result<MemoryMetadata> {
        either!(self, s => s.metadata(user_id))
    }
}
