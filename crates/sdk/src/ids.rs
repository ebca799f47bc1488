//! Node identity and compact unique ids.
//!
//! A `nodeId` is stable per place in the code (`tool:search`, `llm:step`,
//! `agent:<run>`); an `instanceId` is unique per execution.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The logical node of a model step in an agent loop (the id every GraphMind client uses).
pub const LLM_STEP_NODE_ID: &str = "llm:step";

/// A random per-process prefix so ids from two processes never collide.
static BASE: LazyLock<String> = LazyLock::new(|| hex(rand::random::<u32>() as u64, 6));
static COUNTER: AtomicU64 = AtomicU64::new(1);

fn hex(value: u64, digits: usize) -> String {
    let full = format!("{value:016x}");
    full[full.len() - digits..].to_owned()
}

/// A globally unique run id: `run_<12 hex>`.
pub fn new_run_id() -> String {
    format!("run_{}", hex(rand::random::<u64>(), 12))
}

/// A compact per-process unique id: `<prefix>_<base>_<n>`.
pub fn next_id(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}_{}_{n}", *BASE)
}

/// `<kind>:<name>`, the stable logical id of a node.
pub fn node_id(kind: mindgate_protocol::NodeKind, name: &str) -> String {
    format!("{}:{name}", kind.as_str())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_shaped() {
        let a = next_id("call");
        let b = next_id("call");
        assert_ne!(a, b);
        assert!(a.starts_with("call_"));
        let r = new_run_id();
        assert_eq!(r.len(), "run_".len() + 12);
        assert_eq!(
            node_id(mindgate_protocol::NodeKind::Tool, "search"),
            "tool:search"
        );
    }
}
