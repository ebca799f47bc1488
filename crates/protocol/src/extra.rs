//! The open-ended part of every loose object: fields the protocol does not name.

use serde_json::{Map, Value};

/// Unknown fields of a loose object, kept in arrival order.
pub type Extra = Map<String, Value>;
