//! One attached app's frames: each is parsed once, checked (limits, direction, the run's
//! id and claim), shown to the hub when it changes what the hub knows, and queued for
//! the writer; a dropped frame is counted and, rate-limited, told to the app.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use mindgate_protocol::{Direction, Envelope, Message, ParseResult, parse_envelope};
use mindgate_store::{NewEvent, TryAppendError, check_limits};
use serde_json::json;

use super::{NOTICE_TYPE, SESSION_CACHE, close_code, invalid};
use crate::hub::{ClaimVerdict, ConnId};
use crate::state::{AppState, Dropped, Stats};

/// What an attached connection knows between its frames.
pub(super) struct Session {
    pub(super) conn: ConnId,
    app: Option<Arc<str>>,
    token: Arc<str>,
    allowed: HashSet<String>,
    refused: HashSet<String>,
    observed: HashSet<String>,
    /// Frames this connection had dropped, by [`Dropped::index`].
    dropped: [u64; Dropped::ALL.len()],
    /// Notices to send the app after the current frame.
    pub(super) notices: Vec<String>,
}

fn is_power_of_ten(mut n: u64) -> bool {
    while n >= 10 && n.is_multiple_of(10) {
        n /= 10;
    }
    n == 1
}

/// Inserts into a bounded cache, emptying it first when full.
fn cache_insert(cache: &mut HashSet<String>, key: &str) -> bool {
    if cache.len() >= SESSION_CACHE && !cache.contains(key) {
        cache.clear();
    }
    cache.insert(key.to_owned())
}

impl Session {
    /// Counts a dropped frame (globally and for this connection), logs it
    /// rate-limited, and queues a notice to the app for the first three, then
    /// the 10th, 100th, 1,000th… of each reason on this connection.
    fn drop_frame(
        &mut self,
        state: &AppState,
        why: Dropped,
        message: &str,
        run_id: Option<&str>,
        seq: u64,
    ) {
        let total = state.stats.drop_frame(why);
        if why == Dropped::RunClaim {
            Stats::bump(&state.stats.refused_events);
        }
        if total <= 10 || total.is_multiple_of(1_000) {
            tracing::warn!(
                conn = self.conn,
                total,
                code = why.code(),
                "dropped a frame: {message}"
            );
        }
        let Some(count) = self.dropped.get_mut(why.index()) else {
            return;
        };
        *count += 1;
        let n = *count;
        if n <= 3 || is_power_of_ten(n) {
            let run_id = run_id
                .filter(|r| r.len() <= mindgate_store::MAX_RUN_ID_BYTES)
                .unwrap_or(mindgate_protocol::WILDCARD_RUN_ID);
            let notice = json!({
                "gm": mindgate_protocol::PROTOCOL_VERSION,
                "seq": 0,
                "ts": mindgate_store::now_ms(),
                "runId": run_id,
                "type": NOTICE_TYPE,
                "payload": {"code": why.code(), "message": message, "seq": seq, "count": n},
            });
            self.notices.push(notice.to_string());
        }
    }

    /// A session for the connection `conn` of `app`, which holds the runs of `token`.
    pub(super) fn new(conn: ConnId, app: Option<Arc<str>>, token: Arc<str>) -> Self {
        Session {
            conn,
            app,
            token,
            allowed: HashSet::new(),
            refused: HashSet::new(),
            observed: HashSet::new(),
            dropped: [0; Dropped::ALL.len()],
            notices: Vec::new(),
        }
    }

    /// Handles one text frame. Returns a close code and reason to end the connection.
    pub(super) async fn frame(&mut self, state: &AppState, text: &str) -> Verdict {
        let mut parsed = parse_envelope(text);
        let (run_id, seq) = match self.addressed_run(state, &parsed) {
            Ok(run) => run,
            Err(verdict) => return verdict,
        };
        if !self.may_write(state, &run_id).await {
            self.drop_frame(
                state,
                Dropped::RunClaim,
                "this run belongs to another connection (reconnect with its hello.resumeToken)",
                Some(&run_id),
                seq,
            );
            return None;
        }
        let stamped = match self.observe(state, &mut parsed, &run_id, seq) {
            Ok(stamped) => stamped,
            Err(()) => return None,
        };
        let text = stamped.as_deref().unwrap_or(text);
        let event = NewEvent::from_parsed(text, parsed)?;
        let event = event
            .with_app_hint(self.app.clone())
            .with_claim(Some(Arc::clone(&self.token)));
        append(state, event).await
    }

    /// The run (and `seq`) an event frame writes to, or what to do with a frame that
    /// writes nothing: dropped (counted, told) or the connection closed.
    fn addressed_run(
        &mut self,
        state: &AppState,
        parsed: &ParseResult,
    ) -> Result<(String, u64), Verdict> {
        let (run_id, seq) = match parsed {
            ParseResult::Ok(env) => (Some(env.run_id.as_str()), env.seq),
            ParseResult::UnknownType(op) => (Some(op.run_id.as_str()), op.seq),
            _ => (None, 0),
        };
        if let Err(refusal) = check_limits(parsed) {
            self.drop_frame(state, refusal.into(), &refusal.message(), run_id, seq);
            return Err(None);
        }
        match parsed {
            ParseResult::Ok(env) => self.check_direction(state, env)?,
            ParseResult::UnknownType(_) => {}
            ParseResult::VersionMismatch { received } => {
                return Err(Some((
                    close_code::PROTOCOL,
                    format!(
                        "protocol version mismatch: this viewer speaks gm {}, the client sent gm {received}",
                        mindgate_protocol::PROTOCOL_VERSION
                    ),
                )));
            }
            ParseResult::Invalid { reason, .. } => {
                invalid(state, self.conn, reason);
                return Err(None);
            }
        }
        let run_id = run_id.unwrap_or_default();
        if let Some((why, message)) = refused_run_id(run_id) {
            let shown = (why != Dropped::WildcardRunId).then_some(run_id);
            self.drop_frame(state, why, message, shown, seq);
            return Err(None);
        }
        Ok((run_id.to_owned(), seq))
    }

    /// Events only: a control or a second handshake on `/ingest` is dropped.
    fn check_direction(&mut self, state: &AppState, env: &Envelope) -> Result<(), Verdict> {
        match Message::direction_of(env.type_name()) {
            Some(Direction::Event) => Ok(()),
            Some(Direction::Control) => {
                let message = format!(
                    "{} is a control (viewer → app); /ingest takes events",
                    env.type_name()
                );
                self.drop_frame(
                    state,
                    Dropped::ControlOnIngest,
                    &message,
                    Some(&env.run_id),
                    env.seq,
                );
                Err(None)
            }
            _ => {
                let message = format!("{} after the handshake is ignored", env.type_name());
                self.drop_frame(state, Dropped::RepeatedHello, &message, None, env.seq);
                Err(None)
            }
        }
    }

    /// Shows the hub the frames that change what it knows (gates, finishes, a run's first
    /// event, a replay's nodes). `Ok(Some(json))` when the hub stamped the envelope (a
    /// principal, a replay's meta): that is what is stored; `Err` when the hub refused it
    /// (dropped).
    fn observe(
        &mut self,
        state: &AppState,
        parsed: &mut ParseResult,
        run_id: &str,
        seq: u64,
    ) -> Result<Option<String>, ()> {
        let ParseResult::Ok(env) = parsed else {
            return Ok(None);
        };
        let wanted = matches!(
            env.message,
            Message::ExecPaused(_)
                | Message::ExecResumed(_)
                | Message::ExecRefused(_)
                | Message::RunFinished(_)
        ) || !self.observed.contains(run_id)
            || (matches!(env.message, Message::NodeStarted(_)) && state.hub.replay_watching());
        if !wanted {
            return Ok(None);
        }
        let stamped = match state.hub.observe(self.conn, env) {
            Err(refusal) => {
                self.drop_frame(state, refusal.into(), &refusal.message(), Some(run_id), seq);
                return Err(());
            }
            Ok(true) => Some(env.to_json()),
            Ok(false) => None,
        };
        if !matches!(env.message, Message::RunFinished(_)) {
            cache_insert(&mut self.observed, run_id);
        }
        Ok(stamped)
    }

    async fn may_write(&mut self, state: &AppState, run_id: &str) -> bool {
        if self.allowed.contains(run_id) {
            return true;
        }
        if self.refused.contains(run_id) {
            return false;
        }
        let verdict = match state.hub.check_claim(self.conn, run_id) {
            ClaimVerdict::Unknown => {
                let store = state.store.clone();
                let id = run_id.to_owned();
                let stored = tokio::task::spawn_blocking(move || store.run_claim(&id))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or(None);
                state.hub.settle_claim(self.conn, run_id, stored)
            }
            v => v,
        };
        let ok = verdict == ClaimVerdict::Allowed;
        if ok {
            cache_insert(&mut self.allowed, run_id);
        } else {
            cache_insert(&mut self.refused, run_id);
        }
        ok
    }
}

/// What a frame's handling ends in: `Some` closes the connection with that code and reason.
pub(super) type Verdict = Option<(u16, String)>;

/// Why an event may not write to `run_id` whatever its claim: the wildcard is for the
/// handshake and controls, `otlp-` runs are the OTLP receiver's.
fn refused_run_id(run_id: &str) -> Option<(Dropped, &'static str)> {
    if run_id == mindgate_protocol::WILDCARD_RUN_ID {
        return Some((
            Dropped::WildcardRunId,
            "events need a run's id; runId \"*\" is for the handshake and controls",
        ));
    }
    if run_id.starts_with(mindgate_otlp::RUN_PREFIX) {
        return Some((
            Dropped::RunClaim,
            "runs whose id begins with otlp- belong to the OTLP receiver (POST /v1/traces); \
             an app cannot write them",
        ));
    }
    None
}

/// Queues `event` for the writer; back-pressure without blocking the runtime: retries
/// while the queue is full. Closes the connection when the store has stopped.
async fn append(state: &AppState, mut event: NewEvent) -> Verdict {
    loop {
        match state.writer.try_append(event) {
            Ok(()) => {
                Stats::bump(&state.stats.accepted_events);
                return None;
            }
            Err(TryAppendError::Full(back)) => {
                event = *back;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Err(TryAppendError::Gone) => {
                return Some((close_code::GOING_AWAY, "the store has stopped".to_owned()));
            }
        }
    }
}
