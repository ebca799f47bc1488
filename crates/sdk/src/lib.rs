//! Mindgate sdk.
