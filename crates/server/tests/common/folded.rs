//! A viewer's run graph folded from `/ws/ui` messages: one snapshot, then deltas.
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use serde_json::{Value, json};

use super::{Ws, next_json};

/// A viewer's graph, folded from one snapshot and the deltas after it.
#[derive(Default)]
pub struct Folded {
    pub nodes: Vec<Value>,
    pub seq: Option<u64>,
    /// The `seq` the snapshot was taken at.
    pub snapshot_seq: Option<u64>,
    /// Parts of the snapshot received, and whether more are coming.
    pub snapshot_parts: usize,
    pub in_snapshot: bool,
    pub deltas: usize,
}

impl Folded {
    /// Applies one part of a snapshot; returns whether more parts follow.
    pub fn snapshot(&mut self, msg: &Value) -> bool {
        if !self.in_snapshot {
            self.nodes.clear();
        }
        let part = msg["nodes"].as_array().expect("a snapshot part has nodes");
        assert!(part.len() <= 500, "parts of at most 500 nodes");
        self.nodes.extend(part.iter().cloned());
        self.seq = msg["seq"].as_u64();
        self.snapshot_seq = self.seq;
        self.snapshot_parts += 1;
        self.in_snapshot = msg["more"] == true;
        self.in_snapshot
    }

    /// Reads until the whole snapshot is applied.
    pub async fn read_snapshot(&mut self, ui: &mut Ws) {
        loop {
            let msg = next_json(ui).await.expect("snapshot");
            if msg["type"] == "graph.snapshot" && !self.snapshot(&msg) {
                return;
            }
        }
    }

    pub fn delta(&mut self, msg: &Value) {
        let seq = msg["seq"].as_u64().expect("a delta has a seq");
        assert!(
            self.seq.is_none_or(|s| seq > s),
            "deltas come after the snapshot, in order ({seq} after {:?})",
            self.seq
        );
        self.seq = Some(seq);
        self.deltas += 1;
        for change in msg["nodes"].as_array().expect("nodes") {
            let mut fields = change.clone();
            fields.as_object_mut().unwrap().remove("instanceCount");
            match self
                .nodes
                .iter_mut()
                .find(|n| n["nodeId"] == change["nodeId"])
            {
                Some(node) => {
                    fields["instances"] = node["instances"].take();
                    *node = fields;
                }
                None => {
                    fields["instances"] = json!([]);
                    self.nodes.push(fields);
                }
            }
        }
        for change in msg["instances"].as_array().expect("instances") {
            let mut instance = change.clone();
            let node_id = instance.as_object_mut().unwrap().remove("nodeId").unwrap();
            let node = self
                .nodes
                .iter_mut()
                .find(|n| n["nodeId"] == node_id)
                .expect("the instance's node is known");
            let list = node["instances"].as_array_mut().unwrap();
            let slot = list
                .iter_mut()
                .find(|i| i["instanceId"] == instance["instanceId"]);
            // Streamed text comes as slices to append to what the view holds.
            let fields = instance.as_object_mut().unwrap();
            assert!(!fields.contains_key("tokens"), "no whole text in a delta");
            let held = slot
                .as_ref()
                .and_then(|i| i["tokens"].as_str())
                .unwrap_or_default();
            let added = fields.remove("tokensAdded");
            let added = added.as_ref().and_then(Value::as_str).unwrap_or_default();
            fields.insert("tokens".to_owned(), Value::from(format!("{held}{added}")));
            match slot {
                Some(slot) => *slot = instance,
                None => list.push(instance),
            }
        }
    }

    /// Reads the viewer's messages until it has applied `last_seq`.
    pub async fn follow(&mut self, ui: &mut Ws, last_seq: u64) {
        while self.seq != Some(last_seq) {
            let msg = next_json(ui).await.expect("feed ended early");
            match msg["type"].as_str() {
                Some("graph.snapshot") => {
                    self.snapshot(&msg);
                }
                Some("graph.delta") => self.delta(&msg),
                Some("event") => panic!("projection mode sends no raw events"),
                _ => {}
            }
        }
    }
}
