//! The announcements on the `mindgate_hub` channel: small JSON texts naming what changed
//! (the listener reads the rows themselves), sent inside the changing transaction.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The prefix of the `LISTEN` / `NOTIFY` channel of the hub state. Channels are
/// database-wide, so the channel is named after the schema the tables live in
/// ([`channel_for`]): two deployments in two schemas of one database never hear each
/// other.
pub const CHANNEL: &str = "mindgate_hub";

/// The channel of the cluster whose tables live in `schema`: `mindgate_hub_<hash>`.
pub fn channel_for(schema: &str) -> String {
    // FNV-1a: stable across builds and platforms, and the name stays a plain identifier.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in schema.as_bytes() {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{CHANNEL}_{hash:016x}")
}

/// A `NOTIFY` payload must stay under 8,000 bytes; answers' messages are cut to fit.
const MAX_MESSAGE_CHARS: usize = 2_000;

/// One announcement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum Notice {
    /// A gate of `from` is held (new, or held again after a refusal).
    #[serde(rename_all = "camelCase")]
    Held {
        from: String,
        run_id: String,
        pause_id: String,
    },
    /// A gate is no longer held.
    #[serde(rename_all = "camelCase")]
    Released {
        from: String,
        run_id: String,
        pause_id: String,
    },
    /// A resume of `to`'s gate won on `from`: `to` reads the recorded request.
    #[serde(rename_all = "camelCase")]
    Resume {
        from: String,
        to: String,
        run_id: String,
        pause_id: String,
    },
    /// `from`'s app answered the resume `ticket` that `to` won.
    #[serde(rename_all = "camelCase")]
    Answer {
        from: String,
        to: String,
        ticket: String,
        reply: Value,
    },
    /// The shared debug state changed.
    #[serde(rename_all = "camelCase")]
    Debug { from: String },
}

impl Notice {
    /// The JSON text to send.
    pub(crate) fn to_payload(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a payload; `None` for anything else (a newer instance's kinds are ignored).
    pub(crate) fn parse(payload: &str) -> Option<Notice> {
        serde_json::from_str(payload).ok()
    }
}

/// Cuts a reply's `message` so the payload stays well under PostgreSQL's limit.
pub(crate) fn fit_reply(mut reply: Value) -> Value {
    if let Some(message) = reply.get_mut("message")
        && let Some(text) = message.as_str()
        && text.chars().count() > MAX_MESSAGE_CHARS
    {
        let cut: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
        *message = Value::String(format!("{cut}…"));
    }
    reply
}

/// Sends `notice` on `channel` (delivered when the surrounding transaction commits).
pub(crate) fn send(
    client: &mut impl postgres::GenericClient,
    channel: &str,
    notice: &Notice,
) -> Result<(), postgres::Error> {
    client.execute(
        "SELECT pg_notify($1, $2)",
        &[&channel, &notice.to_payload()],
    )?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_round_trips_and_unknown_kinds_are_ignored() {
        let n = Notice::Resume {
            from: "a".into(),
            to: "b".into(),
            run_id: "r".into(),
            pause_id: "p".into(),
        };
        assert_eq!(Notice::parse(&n.to_payload()), Some(n));
        assert_eq!(Notice::parse(r#"{"kind":"future","from":"x"}"#), None);
        assert_eq!(Notice::parse("not json"), None);
    }

    #[test]
    fn each_schema_has_a_channel_of_its_own() {
        let public = channel_for("public");
        assert!(
            public.starts_with("mindgate_hub_") && public.len() == 29,
            "{public}"
        );
        assert_ne!(public, channel_for("team_b"));
        assert_eq!(public, channel_for("public"));
    }

    #[test]
    fn a_long_message_is_cut_to_fit_a_notification() {
        let long = "é".repeat(10_000);
        let reply = fit_reply(serde_json::json!({"result": "refused", "message": long}));
        let payload = Notice::Answer {
            from: "a".repeat(32),
            to: "b".repeat(32),
            ticket: "t".repeat(32),
            reply,
        }
        .to_payload();
        assert!(payload.len() < 8_000, "{} bytes", payload.len());
    }
}
