//! Run options: the thread, user and tags a run belongs to, written into its
//! `run.started` meta as `threadId`, `userId` and `tags` (the keys the store groups
//! threads by — see `docs/threads.md`).

use serde_json::{Map, Value};

/// Who and what a run belongs to. Empty options add nothing to the meta.
///
/// ```no_run
/// use mindgate_sdk::{run_with, RunOptions};
/// # async fn turn() -> Result<(), mindgate_sdk::Aborted> {
/// let options = RunOptions::new().thread("chat-42").user("ada").tag("beta");
/// run_with("turn", options, (), async { Ok::<_, mindgate_sdk::Aborted>(()) }).await
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// The conversation the run is one turn of (meta `threadId`).
    pub thread: Option<String>,
    /// The person or account the run serves (meta `userId`).
    pub user: Option<String>,
    /// Labels to filter runs by (meta `tags`), kept in order, each once.
    pub tags: Vec<String>,
}

impl RunOptions {
    /// No thread, no user, no tags.
    pub fn new() -> Self {
        Self::default()
    }

    /// The run's thread (meta `threadId`).
    pub fn thread(mut self, id: impl Into<String>) -> Self {
        self.thread = Some(id.into());
        self
    }

    /// The run's user (meta `userId`).
    pub fn user(mut self, id: impl Into<String>) -> Self {
        self.user = Some(id.into());
        self
    }

    /// Adds one tag (meta `tags`); a tag already present is not added twice.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        let tag = tag.into();
        if !self.tags.contains(&tag) {
            self.tags.push(tag);
        }
        self
    }

    /// Writes the options into a run's meta: they win over the same keys in `meta`,
    /// so a run's thread is the one its options name.
    pub(crate) fn apply(&self, meta: &mut Map<String, Value>) {
        if let Some(thread) = &self.thread {
            meta.insert("threadId".to_owned(), Value::String(thread.clone()));
        }
        if let Some(user) = &self.user {
            meta.insert("userId".to_owned(), Value::String(user.clone()));
        }
        if !self.tags.is_empty() {
            let tags = self.tags.iter().cloned().map(Value::String).collect();
            meta.insert("tags".to_owned(), Value::Array(tags));
        }
    }
}

/// `meta` as an object (a non-object value under `value`, as `run` stores it) with the
/// options written over it.
pub(crate) fn meta_with(options: &RunOptions, meta: impl serde::Serialize) -> Value {
    let mut map = match serde_json::to_value(meta) {
        Ok(Value::Object(m)) => m,
        Ok(Value::Null) | Err(_) => Map::new(),
        Ok(other) => {
            let mut m = Map::new();
            m.insert("value".to_owned(), other);
            m
        }
    };
    options.apply(&mut map);
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_write_thread_user_and_tags_over_the_meta() {
        let options = RunOptions::new()
            .thread("t-1")
            .user("ada")
            .tag("beta")
            .tag("beta")
            .tag("eu");
        let meta = meta_with(&options, json!({"threadId": "other", "ticket": 7}));
        assert_eq!(
            meta,
            json!({"threadId": "t-1", "userId": "ada", "tags": ["beta", "eu"], "ticket": 7})
        );
    }

    #[test]
    fn empty_options_leave_the_meta_as_it_is() {
        assert_eq!(meta_with(&RunOptions::new(), ()), json!({}));
        assert_eq!(meta_with(&RunOptions::new(), "x"), json!({"value": "x"}));
    }
}
