//! The record, input, search and ledger types (serde camelCase, JSON-stable).

mod inputs;
mod ledger;
mod message;
mod records;
mod search;

pub use inputs::*;
pub use ledger::*;
pub use message::*;
pub use records::*;
pub use search::*;
