//! The other memory tiers of [`MemoryClient`]: working blocks (get / put / append /
//! replace), session messages (push / list), episodes and procedures (search / list).
//! Searches are `retriever` nodes, every other call a `custom` node `memory:<op>`; like the
//! fact calls they fail open (an error value, logged, never a panic).

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{MemoryClient, MemoryError, MemoryHit, SearchOptions, logged, segment};
use crate::NodeKind;

/// A working block to create or overwrite (`PUT /api/memory/blocks/:label`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockArgs {
    /// Owner (default: the client's user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The agent writing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The new value.
    pub value: String,
    /// What the block is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Character limit (default 2000 for a new block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub char_limit: Option<u32>,
    /// Refuse later writes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

impl BlockArgs {
    /// A block holding `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            ..Self::default()
        }
    }
}

/// What `POST …/sessions/:id/messages` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushReceipt {
    /// The stored message's id.
    pub message_id: String,
    /// Its position in the session, from 1.
    pub sequence: u64,
    /// When it was stored (ISO-8601).
    pub persisted_at: String,
}

#[derive(Deserialize)]
struct Records {
    records: Vec<Value>,
}

#[derive(Deserialize)]
struct Messages {
    messages: Vec<Value>,
}

impl MemoryClient {
    fn user_pairs(&self) -> Vec<(&'static str, String)> {
        self.user_id.iter().map(|u| ("userId", u.clone())).collect()
    }

    /// `GET /api/memory/blocks/:label`: one working block (`Block`, as JSON). A `custom`
    /// node `memory:block_get`.
    pub async fn block(&self, label: &str) -> Result<Value, MemoryError> {
        let path = format!("/api/memory/blocks/{}", segment(label));
        let pairs = self.user_pairs();
        let answer = self
            .node(NodeKind::Custom, "memory:block_get")
            .input(&json!({ "label": label, "userId": self.user_id }))
            .call(|_| self.read(&path, &pairs))
            .await;
        logged("block_get", answer)
    }

    /// `PUT /api/memory/blocks/:label`: creates the block or replaces its value; returns
    /// it. A `custom` node `memory:block_put`.
    pub async fn put_block(&self, label: &str, block: &BlockArgs) -> Result<Value, MemoryError> {
        let mut block = block.clone();
        if block.user_id.is_none() {
            block.user_id.clone_from(&self.user_id);
        }
        let path = format!("/api/memory/blocks/{}", segment(label));
        let answer = self
            .node(NodeKind::Custom, "memory:block_put")
            .input(&json!({ "label": label, "block": &block }))
            .call(|_| self.write(Method::PUT, path.clone(), &block))
            .await;
        logged("block_put", answer)
    }

    /// `POST /api/memory/blocks/:label/append`: appends `text` (include any separator);
    /// returns the block. A `custom` node `memory:block_append`.
    pub async fn append_block(&self, label: &str, text: &str) -> Result<Value, MemoryError> {
        let path = format!("/api/memory/blocks/{}/append", segment(label));
        let body = json!({ "userId": self.user_id, "text": text });
        let answer = self
            .node(NodeKind::Custom, "memory:block_append")
            .input(&json!({ "label": label, "userId": self.user_id, "text": text }))
            .call(|_| self.write(Method::POST, path.clone(), &body))
            .await;
        logged("block_append", answer)
    }

    /// `POST /api/memory/blocks/:label/replace`: replaces the first `old` by `new`; returns
    /// the block. A `custom` node `memory:block_replace`.
    pub async fn replace_block(
        &self,
        label: &str,
        old: &str,
        new: &str,
    ) -> Result<Value, MemoryError> {
        let path = format!("/api/memory/blocks/{}/replace", segment(label));
        let body = json!({ "userId": self.user_id, "old": old, "new": new });
        let answer = self
            .node(NodeKind::Custom, "memory:block_replace")
            .input(&json!({ "label": label, "userId": self.user_id, "old": old, "new": new }))
            .call(|_| self.write(Method::POST, path.clone(), &body))
            .await;
        logged("block_replace", answer)
    }

    /// `POST /api/memory/sessions/:sessionId/messages`: stores `message`
    /// (`{role, content, toolCalls?, toolCallId?}`) at the end of the session. A `custom`
    /// node `memory:message_push`.
    pub async fn push_message(
        &self,
        session_id: &str,
        message: &Value,
    ) -> Result<PushReceipt, MemoryError> {
        let path = format!("/api/memory/sessions/{}/messages", segment(session_id));
        let body = json!({ "userId": self.user_id, "message": message });
        let answer = self
            .node(NodeKind::Custom, "memory:message_push")
            .input(&json!({ "sessionId": session_id, "userId": self.user_id, "message": message }))
            .call(|_| self.write(Method::POST, path.clone(), &body))
            .await;
        logged("message_push", answer)
    }

    /// `GET /api/memory/sessions/:sessionId/messages`: the session's messages in order,
    /// after sequence `after`, at most `limit` (`SessionMessage`s, as JSON). A `custom`
    /// node `memory:messages`.
    pub async fn messages(
        &self,
        session_id: &str,
        after: Option<u64>,
        limit: Option<usize>,
    ) -> Result<Vec<Value>, MemoryError> {
        let path = format!("/api/memory/sessions/{}/messages", segment(session_id));
        let mut pairs: Vec<(&str, String)> = Vec::new();
        // A session id is per user: the client's user's session.
        if let Some(user) = &self.user_id {
            pairs.push(("userId", user.clone()));
        }
        if let Some(after) = after {
            pairs.push(("after", after.to_string()));
        }
        if let Some(limit) = limit {
            pairs.push(("limit", limit.to_string()));
        }
        let answer = self
            .node(NodeKind::Custom, "memory:messages")
            .input(&json!({ "sessionId": session_id, "after": after, "limit": limit }))
            .call(|_| async {
                let page: Messages = self.read(&path, &pairs).await?;
                Ok::<_, MemoryError>(page.messages)
            })
            .await;
        logged("messages", answer)
    }

    /// Searches episodes: [`MemoryClient::search`] with `kinds` fixed to `episodic`, a
    /// `retriever` node `memory:episode_search`.
    pub async fn search_episodes(
        &self,
        options: &SearchOptions,
    ) -> Result<Vec<MemoryHit>, MemoryError> {
        self.search_kind(options, "episodic", "memory:episode_search")
            .await
    }

    /// Searches procedures (rules and induced procedures): `kinds` fixed to `procedural`, a
    /// `retriever` node `memory:procedure_search`.
    pub async fn search_procedures(
        &self,
        options: &SearchOptions,
    ) -> Result<Vec<MemoryHit>, MemoryError> {
        self.search_kind(options, "procedural", "memory:procedure_search")
            .await
    }

    /// `GET /api/memory/episodes`: the user's live episodes (`Episode`s, as JSON);
    /// quarantined ones too when asked. A `custom` node `memory:episodes`.
    pub async fn episodes(
        &self,
        include_quarantined: bool,
        limit: Option<usize>,
    ) -> Result<Vec<Value>, MemoryError> {
        self.list_kind(
            "/api/memory/episodes",
            "memory:episodes",
            include_quarantined,
            limit,
        )
        .await
    }

    /// `GET /api/memory/procedures`: the user's live rules and induced procedures (`Rule`s,
    /// as JSON); quarantined ones too when asked. A `custom` node `memory:procedures`.
    pub async fn procedures(
        &self,
        include_quarantined: bool,
        limit: Option<usize>,
    ) -> Result<Vec<Value>, MemoryError> {
        self.list_kind(
            "/api/memory/procedures",
            "memory:procedures",
            include_quarantined,
            limit,
        )
        .await
    }

    async fn search_kind(
        &self,
        options: &SearchOptions,
        kind: &str,
        name: &'static str,
    ) -> Result<Vec<MemoryHit>, MemoryError> {
        let mut options = options.clone();
        options.kinds = Some(vec![kind.to_owned()]);
        if options.user_id.is_none() {
            options.user_id.clone_from(&self.user_id);
        }
        let pairs = options.query_pairs();
        let answer = self
            .node(NodeKind::Retriever, name)
            .input(&options)
            .call(|_| async {
                let page: super::SearchAnswer = self.read("/api/memory/search", &pairs).await?;
                Ok::<_, MemoryError>(page.hits)
            })
            .await;
        logged(name, answer)
    }

    async fn list_kind(
        &self,
        path: &str,
        name: &'static str,
        include_quarantined: bool,
        limit: Option<usize>,
    ) -> Result<Vec<Value>, MemoryError> {
        let mut pairs = self.user_pairs();
        pairs.push(("includeQuarantined", include_quarantined.to_string()));
        if let Some(limit) = limit {
            pairs.push(("limit", limit.to_string()));
        }
        let answer = self
            .node(NodeKind::Custom, name)
            .input(&json!({ "userId": self.user_id, "includeQuarantined": include_quarantined, "limit": limit }))
            .call(|_| async {
                let page: Records = self.read(path, &pairs).await?;
                Ok::<_, MemoryError>(page.records)
            })
            .await;
        logged(name, answer)
    }
}
