//! Mindgate store.
