//! The test kit every crate's integration tests share (a dev-dependency only).
//!
//! - [`FixtureHome`]: a temporary Mindgate home that is removed with the value;
//! - [`frames`]: GraphMind frames as the apps send them (`hello`, one of each event type);
//! - [`ServeProcess`]: the real `mindgate serve` binary on a free loopback port, ready once
//!   `/health` answers, stopped with SIGTERM;
//! - [`wait`]: waits on observable conditions, bounded in time (never a bare sleep);
//! - [`chat_stand_in`]: a fixed-answer OpenAI-compatible chat endpoint on 127.0.0.1;
//! - [`redact`]: replaces times, ids and ports in JSON so snapshots are stable;
//! - [`golden`]: golden files compared with what a test generates (`UPDATE_GOLDEN=1` rewrites them);
//! - [`readme`]: the README's marked blocks, so tests run exactly what a reader copies;
//! - [`module_graph`]: a crate's module graph from its `use` paths, and its import cycles;
//! - [`copy_fixture_tree`]: a copy of a fixture folder a test may change.
//! - [`services`]: tests that need PostgreSQL or MiniLM: the `skipped: <why>` rule and
//!   [`PgSchema`], the throwaway PostgreSQL schema of every suite.

pub mod chat_stand_in;
mod fixture_tree;
pub mod frames;
pub mod golden;
mod home;
pub mod module_graph;
pub mod readme;
pub mod redact;
mod serve;
pub mod services;
pub mod wait;

pub use fixture_tree::copy_fixture_tree;
pub use home::FixtureHome;
pub use serve::ServeProcess;
pub use services::{PgSchema, pg_client};
