//! Keys and ids: event identity hashes, decimal ids built into reusable buffers, the
//! tool-arguments hash the retry rule compares.

use super::*;

pub(super) fn key_hash(parts: impl Hash) -> u64 {
    let mut h = FastHasher::default();
    parts.hash(&mut h);
    h.finish()
}

pub(super) fn event_key(e: &Event) -> u64 {
    let k = match &e.kind {
        EventKind::Session(h) => key_hash(&h.id),
        EventKind::Title { title } => key_hash(title),
        EventKind::UserMessage { text } | EventKind::AssistantText { text } => key_hash(text),
        EventKind::TurnStart { turn } | EventKind::TurnEnd { turn, .. } => u64::from(*turn),
        EventKind::StepStart { turn, step } | EventKind::StepEnd { turn, step } => {
            (u64::from(*turn) << 32) | u64::from(*step)
        }
        EventKind::RequestHeader { provider, model } => key_hash((provider, model)),
        EventKind::Usage(u) => key_hash((u.input, u.output, u.cache_read)),
        EventKind::Finish { reason } => key_hash(reason),
        EventKind::LlmRetry { retry, failure, .. } => key_hash((retry, &failure.message)),
        EventKind::ToolCall { call_id, .. } => key_hash(call_id),
        EventKind::ToolResult {
            call_id, is_error, ..
        } => key_hash((call_id, is_error)),
        EventKind::TodoWrite { todos, call_id } => key_hash((call_id, todos.len())),
        EventKind::SubagentDescriptor(d) => key_hash((&d.call_id, &d.session_id)),
        EventKind::ToolCancelled { call_id, .. } => key_hash(call_id),
    };
    key_hash((e.seq, e.kind.tag(), k))
}

/// Appends the decimal digits of `n` (no formatting machinery, no allocation).
pub(super) fn push_num(buf: &mut String, n: u64) {
    buf.push_str(itoa::Buffer::new().format(n));
}

/// `prefix` followed by the parts, numbers in decimal, separated by `sep`, into `buf`.
pub(super) fn build_id(buf: &mut String, prefix: &str, nums: &[u64], sep: char) {
    buf.clear();
    buf.push_str(prefix);
    for (k, &n) in nums.iter().enumerate() {
        if k > 0 {
            buf.push(sep);
        }
        push_num(buf, n);
    }
}

pub(super) fn args_hash(name: &str, args: &Value) -> u64 {
    let mut h = FastHasher::default();
    name.hash(&mut h);
    hash_value(args, &mut h);
    h.finish()
}
