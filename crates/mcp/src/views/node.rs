//! `get_node`'s structured answer: a node and its chosen executions, values previewed.

use mindgate_store::projection::{InstanceDetail, NodeDetail, NodeState};
use serde::Serialize;
use serde_json::{Value, json};

use crate::output::Links;
use crate::output_limits::preview;

/// `get_node`'s structured content.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeView<'a> {
    /// The run.
    pub run_id: &'a str,
    /// The node.
    pub node_id: &'a str,
    /// Its kind.
    pub kind: &'a str,
    /// Its name.
    pub name: &'a str,
    /// What the viewer's box reads instead of the name (an `llm` node's model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<&'a str>,
    /// Its parent.
    pub parent_id: Option<&'a str>,
    /// Its state.
    pub status: NodeState,
    /// Announced by a hint.
    pub hinted: bool,
    /// All its executions.
    pub instance_count: usize,
    /// The chosen executions, values previewed, each with its `index`.
    pub instances: Vec<Value>,
    /// A value was cut at `maxChars`.
    pub values_truncated: bool,
    /// The longest value shown, in characters.
    pub max_chars: usize,
    /// The node in the viewer.
    pub link: String,
    /// The node's full detail on the HTTP API.
    pub full_detail_url: String,
}

impl<'a> NodeView<'a> {
    /// The view of `detail` showing the `chosen` executions (with their index), values cut
    /// at `max_chars`.
    pub fn new(
        detail: &'a NodeDetail,
        chosen: &[(usize, &InstanceDetail)],
        max_chars: usize,
        links: &Links,
    ) -> Self {
        let mut values_truncated = false;
        let instances = chosen
            .iter()
            .map(|(index, inst)| {
                let raw = serde_json::to_value(inst).unwrap_or_else(|_| json!({}));
                let (mut v, cut) = preview(&raw, max_chars);
                values_truncated |= cut;
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("index".to_owned(), json!(index));
                }
                v
            })
            .collect();
        NodeView {
            run_id: &detail.run_id,
            node_id: &detail.node_id,
            kind: &detail.kind,
            name: &detail.name,
            label: detail.label.as_deref(),
            parent_id: detail.parent_id.as_deref(),
            status: detail.status,
            hinted: detail.hinted,
            instance_count: detail.instances.len(),
            instances,
            values_truncated,
            max_chars,
            link: links.node(&detail.run_id, &detail.node_id),
            full_detail_url: links.api_node(&detail.run_id, &detail.node_id),
        }
    }
}
