//! Mindgate server.
