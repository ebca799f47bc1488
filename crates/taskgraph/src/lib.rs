//! Mindgate taskgraph.
