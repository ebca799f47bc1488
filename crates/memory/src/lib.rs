//! Mindgate's agent memory: the Graphorin memory model (working, session, episodic,
//! semantic, procedural and shared tiers, insights and an entity graph) as an embedded
//! SQLite store with a trust gate against memory poisoning, valid time *and* transaction
//! time, and hybrid (BM25 + vector, score or reciprocal rank fusion) search whose hits say why they
//! were recalled.
//!
//! The [`store`] traits are the one core the CLI, MCP/HTTP surfaces and the viewer call;
//! [`SqliteMemory`] is the embedded default backend; [`PgMemory`] keeps the same store in
//! PostgreSQL for several instances. [`induction`] turns a succeeded task
//! graph (`mindgate-taskgraph`) into a quarantined, deduplicated induced procedure.

pub mod agent;
pub mod answer;
pub mod backend;
pub mod bench;
pub mod config;
pub mod consolidate;
pub(crate) mod entity_writes;
pub mod error;
pub mod feedback;
pub mod fusion;
pub(crate) mod hybrid;
pub mod induction;
pub mod lexical;
pub mod maintenance;
pub mod neighbours;
pub(crate) mod parts;
pub mod postgres;
pub mod recall;
pub mod reembed;
pub mod route;
pub mod rules;
pub mod schema;
pub(crate) mod search;
pub mod sqlite;
pub mod store;
pub(crate) mod tiers;
pub mod time;
pub mod transfer;
pub mod trust;
pub mod types;
pub mod vectors;
pub(crate) mod working;

pub use self::postgres::PgMemory;
pub use backend::{Memory, MemoryDb};
pub use config::{
    BUILTIN_VECTOR_FLOOR, FusionDefaults, MemoryConfig, OpenOptions, TRAINED_VECTOR_FLOOR,
};
pub use error::{MemoryError, Result};
pub use rules::belief::FactAt;
pub use rules::listing::{ItemFilter, MAX_LIST};
pub use sqlite::SqliteMemory;
pub use store::*;
pub use transfer::TransferReport;
pub use types::*;
