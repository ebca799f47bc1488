//! A changed node's `event_ids` in a live `delta`, as a splice of what the clients hold.
//!
//! A step that streams keeps growing its `event_ids` (one per chunk); sent whole with every
//! change, a long step made each delta larger than the last. The server remembers, per node,
//! how many ids it last published and the first and last of them; when the node's list still
//! starts with those (ids are appended, and a re-sorted list moves its last element), the
//! node travels with `event_ids_keep: n` and only the ids after the first `n`.

use mindgate_taskgraph::Node;
use serde_json::Value;

/// What the clients hold of each node's `event_ids` (by node index).
#[derive(Debug, Default)]
pub(super) struct PublishedEventIds {
    /// `(count, first, last)` of the list last published; `None` where not known.
    nodes: Vec<Option<(usize, u64, u64)>>,
}

impl PublishedEventIds {
    /// Forgets everything (after a rebuild, clients get the whole graph again).
    pub(super) fn clear(&mut self) {
        self.nodes.clear();
    }

    /// Node `i` as the delta sends it, and records what the clients will hold of it.
    pub(super) fn node_json(&mut self, i: usize, node: &Node) -> serde_json::Result<Value> {
        let ids = &node.event_ids;
        let keep = self.kept(i, ids);
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, None);
        }
        self.nodes[i] = match (ids.first(), ids.last()) {
            (Some(&first), Some(&last)) => Some((ids.len(), first, last)),
            _ => None,
        };
        let mut value = serde_json::to_value(node)?;
        if keep > 0
            && let Some(obj) = value.as_object_mut()
        {
            obj.insert("event_ids".to_owned(), serde_json::to_value(&ids[keep..])?);
            obj.insert("event_ids_keep".to_owned(), Value::from(keep));
        }
        Ok(value)
    }

    /// How many of `ids` the clients already hold as its first ones (0: send them all).
    fn kept(&self, i: usize, ids: &[u64]) -> usize {
        match self.nodes.get(i).copied().flatten() {
            Some((count, first, last))
                if count <= ids.len()
                    && ids.first() == Some(&first)
                    && ids.get(count - 1) == Some(&last) =>
            {
                count
            }
            _ => 0,
        }
    }
}
