//! The memory model's rules and row shapes, written once for every backend: what each
//! tier accepts and stores ([`row`] and the per-tier modules), which records a listing or a
//! belief-at-an-instant admits, how entity names resolve and what a consolidation writes.
//!
//! Nothing here runs SQL against a connection: the backends ([`crate::sqlite`],
//! [`crate::postgres`]) read and write through narrow statement traits
//! ([`consolidation::ConsolidationWrites`], [`belief::ChainReads`], and beside this module
//! [`crate::tiers`], [`crate::entity_writes`], [`crate::working`], [`crate::transfer`]) and never import each
//! other.

pub mod belief;
pub(crate) mod clause;
pub(crate) mod columns;
pub mod conflicts;
pub(crate) mod consolidation;
pub(crate) mod entities;
pub(crate) mod episodic;
pub(crate) mod filter;
pub(crate) mod insights;
pub mod listing;
pub(crate) mod procedural;
pub(crate) mod row;
pub(crate) mod semantic;
pub(crate) mod session;
pub(crate) mod temporal;
pub(crate) mod writes;
