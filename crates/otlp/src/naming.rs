//! How runs, spans and nodes made of OTLP spans are named: the run id of a trace, a
//! span's key, a placeholder node, clipped names, and the attributes that name a run's
//! thread and user. Shared by the compact read ([`crate::export`]) and the live rules.

use mindgate_store::MAX_NAME_BYTES;

use crate::attrs::Attrs;
use crate::decode::hex;

/// The `sdk.name` of their `run.started`.
pub const SDK_NAME: &str = "opentelemetry";
/// Span (then resource) attributes naming the conversation a trace belongs to, first
/// present wins: the run's meta `threadId` (`docs/otlp.md`).
pub const THREAD_ATTRIBUTES: &[&str] = &["gen_ai.conversation.id", "session.id"];
/// Attributes naming the user a trace ran for: the run's meta `userId`.
pub const USER_ATTRIBUTES: &[&str] = &["user.id", "enduser.id"];

/// What [`THREAD_ATTRIBUTES`] / [`USER_ATTRIBUTES`] say on a span or its resource.
#[derive(Debug, Default, Clone)]
pub(crate) struct RunKeys {
    pub(crate) thread: Option<String>,
    pub(crate) user: Option<String>,
}

impl RunKeys {
    pub(crate) fn of(attrs: &Attrs) -> RunKeys {
        let pick =
            |keys: &[&str]| crate::attrs::first_str(attrs, keys).map(|v| clip(v, MAX_NAME_BYTES));
        RunKeys {
            thread: pick(THREAD_ATTRIBUTES),
            user: pick(USER_ATTRIBUTES),
        }
    }
}

/// How the id of every run made of spans begins: such runs belong to the OTLP receiver
/// (an `/ingest` app cannot write them).
pub const RUN_PREFIX: &str = "otlp-";

/// The run id of a trace.
pub fn run_id_of(trace_id: &[u8]) -> String {
    format!("{RUN_PREFIX}{}", hex(trace_id))
}

pub(crate) fn span_key(id: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = id.len().min(8);
    b[..n].copy_from_slice(&id[..n]);
    u64::from_be_bytes(b)
}

pub(crate) fn placeholder_id(span_id: u64) -> String {
    format!("custom:span-{span_id:016x}")
}

pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}
