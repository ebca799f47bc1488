//! `/ingest`: the WebSocket instrumented apps dial.
//!
//! Handshake first (`hello` → `hello.ack`), then events in, controls out.
//! Events are validated by the protocol crate, checked against run claims and
//! queued for the writer; the connection survives bad frames.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message as WsMessage, Utf8Bytes, WebSocket};
use futures_util::StreamExt;
use mindgate_protocol::{Direction, Envelope, Message, ParseResult, parse_envelope};
use mindgate_store::{NewEvent, TryAppendError, check_hello, check_limits};
use serde_json::json;

use crate::hub::{ClaimVerdict, ConnId};
use crate::state::{AppState, Dropped, Stats};

/// WebSocket close codes used here.
pub mod close_code {
    /// Normal closure.
    pub const NORMAL: u16 = 1000;
    /// Server going away (shutdown).
    pub const GOING_AWAY: u16 = 1001;
    /// Protocol error (wrong protocol version, broken WebSocket framing).
    pub const PROTOCOL: u16 = 1002;
    /// A text frame that is not UTF-8.
    pub const INVALID_DATA: u16 = crate::ws_close::INVALID_DATA;
    /// Policy violation (no hello, wrong first frame).
    pub const POLICY: u16 = 1008;
    /// Message too big.
    pub const TOO_BIG: u16 = 1009;
    /// Try again later (too many connections waiting for their `hello`).
    pub const TRY_AGAIN_LATER: u16 = 1013;
}

const PING_EVERY: Duration = Duration::from_secs(30);

/// Most `/ingest` connections waiting for their `hello` at once; a further
/// one is closed with 1013 right away (it holds no slot for the hello timeout).
pub const MAX_PENDING_HELLOS: usize = 128;

/// Read buffer of an `/ingest` WebSocket (the library default is 128 KiB per
/// connection, which is most of what an idle connection costs; larger frames
/// still arrive whole, read in more steps).
pub const READ_BUFFER_BYTES: usize = 16 * 1024;

/// One connection counted in [`Stats::pending_hellos`] until dropped.
struct PendingHello(Arc<Stats>);

impl PendingHello {
    fn enter(stats: &Arc<Stats>) -> Option<PendingHello> {
        use std::sync::atomic::Ordering;
        let before = stats.pending_hellos.fetch_add(1, Ordering::AcqRel);
        let guard = PendingHello(Arc::clone(stats));
        (before < MAX_PENDING_HELLOS).then_some(guard)
    }
}

impl Drop for PendingHello {
    fn drop(&mut self) {
        self.0
            .pending_hellos
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Most entries in each of a connection's run caches (allowed, refused,
/// observed); a full cache is emptied and refilled from the hub.
pub const SESSION_CACHE: usize = 4_096;

/// The envelope type of the notices the server sends an app about frames it
/// dropped. Clients of protocol v1 ignore unknown types (`graphmind-ai` 0.5.1
/// and the Rust SDK both do), so older clients are unaffected.
pub const NOTICE_TYPE: &str = "ingest.refused";

async fn close(socket: &mut WebSocket, code: u16, reason: &str) {
    let _ = socket
        .send(WsMessage::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from(reason),
        })))
        .await;
}

fn text_of(msg: WsMessage) -> Option<Result<String, ()>> {
    match msg {
        WsMessage::Text(t) => Some(Ok(t.as_str().to_owned())),
        WsMessage::Binary(b) => Some(String::from_utf8(b.to_vec()).map_err(|_| ())),
        _ => None,
    }
}

/// Serves one ingest connection until it closes or the server stops.
pub async fn handle(mut socket: WebSocket, state: AppState) {
    // 1. Handshake: the first frame must be `hello`.
    let Some(pending) = PendingHello::enter(&state.stats) else {
        let n = state.stats.drop_frame(Dropped::PendingHelloLimit);
        if n <= 10 || n.is_multiple_of(1_000) {
            tracing::warn!(
                total = n,
                "refused an /ingest connection: {MAX_PENDING_HELLOS} are waiting for their hello"
            );
        }
        let reason = format!("{MAX_PENDING_HELLOS} connections are waiting for their hello; retry");
        close(&mut socket, close_code::TRY_AGAIN_LATER, &reason).await;
        return;
    };
    let first = tokio::select! {
        _ = state.shutdown.cancelled() => return,
        r = tokio::time::timeout(state.config.hello_timeout, socket.next()) => r,
    };
    let hello = match first {
        Err(_) => {
            let reason = format!(
                "no hello within {} ms",
                state.config.hello_timeout.as_millis()
            );
            close(&mut socket, close_code::POLICY, &reason).await;
            return;
        }
        Ok(None) => return,
        Ok(Some(Err(e))) => {
            if let Some((code, reason)) = crate::ws_close::for_read_error(&e) {
                close(&mut socket, code, &reason).await;
            }
            return;
        }
        Ok(Some(Ok(msg))) => {
            let Some(Ok(text)) = text_of(msg) else {
                close(
                    &mut socket,
                    close_code::POLICY,
                    "expected a hello text frame",
                )
                .await;
                return;
            };
            match parse_envelope(&text) {
                ParseResult::Ok(Envelope {
                    message: Message::Hello(hello),
                    ..
                }) => {
                    if let Err(refusal) = check_hello(&hello) {
                        state.stats.drop_frame(refusal.into());
                        let reason = format!("hello refused: {refusal}");
                        close(&mut socket, close_code::POLICY, &reason).await;
                        return;
                    }
                    if hello.versions.protocol != mindgate_protocol::PROTOCOL_VERSION {
                        let reason = format!(
                            "protocol version mismatch: this viewer speaks GraphMind protocol v{}, the client announced v{}",
                            mindgate_protocol::PROTOCOL_VERSION,
                            hello.versions.protocol
                        );
                        close(&mut socket, close_code::PROTOCOL, &reason).await;
                        return;
                    }
                    hello
                }
                ParseResult::VersionMismatch { received } => {
                    let reason = format!(
                        "protocol version mismatch: this viewer speaks gm {}, the client sent gm {received}",
                        mindgate_protocol::PROTOCOL_VERSION
                    );
                    close(&mut socket, close_code::PROTOCOL, &reason).await;
                    return;
                }
                _ => {
                    close(
                        &mut socket,
                        close_code::POLICY,
                        "the first frame must be a valid hello",
                    )
                    .await;
                    return;
                }
            }
        }
    };
    drop(pending);
    let attached = state.hub.attach(&hello);
    let conn = attached.conn;
    let app = hello.app.clone();
    let token = attached.token.clone();
    let mut controls = attached.controls;
    tracing::info!(conn, app = ?app, "app attached");
    if socket
        .send(WsMessage::Text(Utf8Bytes::from(attached.ack)))
        .await
        .is_err()
    {
        finish(&state, conn);
        return;
    }

    let mut session = Session {
        conn,
        app: app.map(Arc::from),
        token: Arc::from(token),
        allowed: HashSet::new(),
        refused: HashSet::new(),
        observed: HashSet::new(),
        dropped: [0; Dropped::ALL.len()],
        notices: Vec::new(),
    };
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => {
                close(&mut socket, close_code::GOING_AWAY, "server shutting down").await;
                break;
            }
            Some(frame) = controls.recv() => {
                if socket.send(WsMessage::Text(Utf8Bytes::from(frame))).await.is_err() {
                    break;
                }
            }
            _ = ping.tick() => {
                if socket.send(WsMessage::Ping(Default::default())).await.is_err() {
                    break;
                }
            }
            msg = socket.next() => {
                let msg = match msg {
                    None => break,
                    Some(Err(e)) => {
                        if let Some((code, reason)) = crate::ws_close::for_read_error(&e) {
                            tracing::warn!(conn, code, %reason, "bad frame from the app; closing");
                            close(&mut socket, code, &reason).await;
                        } else {
                            tracing::debug!(conn, error = %e, "ingest read failed");
                        }
                        break;
                    }
                    Some(Ok(msg)) => msg,
                };
                // Borrow the frame's text: no copy on the hot path.
                let text = match &msg {
                    WsMessage::Close(_) => break,
                    WsMessage::Text(t) => t.as_str(),
                    WsMessage::Binary(b) => match std::str::from_utf8(b) {
                        Ok(t) => t,
                        Err(_) => {
                            invalid(&state, conn, "binary frame is not UTF-8");
                            continue;
                        }
                    },
                    _ => continue,
                };
                let verdict = session.frame(&state, text).await;
                let mut gone = false;
                for notice in session.notices.drain(..) {
                    if socket.send(WsMessage::Text(Utf8Bytes::from(notice))).await.is_err() {
                        gone = true;
                        break;
                    }
                }
                if let Some((code, reason)) = verdict {
                    close(&mut socket, code, &reason).await;
                    break;
                }
                if gone {
                    break;
                }
            }
        }
    }
    finish(&state, conn);
}

fn invalid(state: &AppState, conn: ConnId, reason: &str) {
    let n = Stats::bump(&state.stats.invalid_frames);
    // Rate-limited: the first few, then every 1,000th.
    if n <= 10 || n.is_multiple_of(1_000) {
        tracing::warn!(conn, total = n, "dropped invalid frame: {reason}");
    }
}

/// After a connection ends: forget it and schedule abandonment of its unfinished runs.
fn finish(state: &AppState, conn: ConnId) {
    let Some((token, runs)) = state.hub.detach(conn) else {
        return;
    };
    tracing::info!(conn, unfinished = runs.len(), "app detached");
    if runs.is_empty() {
        return;
    }
    let state = state.clone();
    let grace = state.config.abandon_grace;
    state.tasks.clone().spawn(async move {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tokio::time::sleep(grace) => {}
        }
        if state.hub.token_attached(&token) {
            return; // the app came back
        }
        let writer = state.writer.clone();
        let result = tokio::task::spawn_blocking(move || writer.abandon(runs)).await;
        match result {
            Ok(Ok(n)) if n > 0 => tracing::info!(count = n, "runs abandoned"),
            Ok(Err(e)) => {
                tracing::warn!(error = %mindgate_errors::error_chain(&e), "could not mark runs abandoned")
            }
            _ => {}
        }
    });
}

struct Session {
    conn: ConnId,
    app: Option<Arc<str>>,
    token: Arc<str>,
    allowed: HashSet<String>,
    refused: HashSet<String>,
    observed: HashSet<String>,
    /// Frames this connection had dropped, by [`Dropped::index`].
    dropped: [u64; Dropped::ALL.len()],
    /// Notices to send the app after the current frame.
    notices: Vec<String>,
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

    /// Handles one text frame. Returns a close code and reason to end the connection.
    async fn frame(&mut self, state: &AppState, text: &str) -> Option<(u16, String)> {
        let parsed = parse_envelope(text);
        if let Err(refusal) = check_limits(&parsed) {
            let (run_id, seq) = match &parsed {
                ParseResult::Ok(env) => (Some(env.run_id.as_str()), env.seq),
                ParseResult::UnknownType(op) => (Some(op.run_id.as_str()), op.seq),
                _ => (None, 0),
            };
            let run_id = run_id.map(str::to_owned);
            self.drop_frame(
                state,
                refusal.into(),
                &refusal.message(),
                run_id.as_deref(),
                seq,
            );
            return None;
        }
        let run_id = match &parsed {
            ParseResult::Ok(env) => {
                match Message::direction_of(env.type_name()) {
                    Some(Direction::Event) => {}
                    Some(Direction::Control) => {
                        let message = format!(
                            "{} is a control (viewer → app); /ingest takes events",
                            env.type_name()
                        );
                        let run_id = env.run_id.clone();
                        self.drop_frame(
                            state,
                            Dropped::ControlOnIngest,
                            &message,
                            Some(&run_id),
                            env.seq,
                        );
                        return None;
                    }
                    _ => {
                        let message = format!("{} after the handshake is ignored", env.type_name());
                        self.drop_frame(state, Dropped::RepeatedHello, &message, None, env.seq);
                        return None;
                    }
                }
                env.run_id.clone()
            }
            ParseResult::UnknownType(op) => op.run_id.clone(),
            ParseResult::VersionMismatch { received } => {
                return Some((
                    close_code::PROTOCOL,
                    format!(
                        "protocol version mismatch: this viewer speaks gm {}, the client sent gm {received}",
                        mindgate_protocol::PROTOCOL_VERSION
                    ),
                ));
            }
            ParseResult::Invalid { reason, .. } => {
                invalid(state, self.conn, reason);
                return None;
            }
        };
        let seq = match &parsed {
            ParseResult::Ok(env) => env.seq,
            ParseResult::UnknownType(op) => op.seq,
            _ => 0,
        };
        if run_id == mindgate_protocol::WILDCARD_RUN_ID {
            self.drop_frame(
                state,
                Dropped::WildcardRunId,
                "events need a run's id; runId \"*\" is for the handshake and controls",
                None,
                seq,
            );
            return None;
        }
        if run_id.starts_with(mindgate_otlp::RUN_PREFIX) {
            self.drop_frame(
                state,
                Dropped::RunClaim,
                "runs whose id begins with otlp- belong to the OTLP receiver (POST /v1/traces); \
                 an app cannot write them",
                Some(&run_id),
                seq,
            );
            return None;
        }
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
        let mut parsed = parsed;
        let mut stamped: Option<String> = None;
        if let ParseResult::Ok(env) = &mut parsed
            && (matches!(
                env.message,
                Message::ExecPaused(_)
                    | Message::ExecResumed(_)
                    | Message::ExecRefused(_)
                    | Message::RunFinished(_)
            ) || !self.observed.contains(&run_id)
                || (matches!(env.message, Message::NodeStarted(_)) && state.hub.replay_watching()))
        {
            match state.hub.observe(self.conn, env) {
                Err(refusal) => {
                    self.drop_frame(
                        state,
                        refusal.into(),
                        &refusal.message(),
                        Some(&run_id),
                        seq,
                    );
                    return None;
                }
                // The hub added a field (a principal, a replay's meta): store that.
                Ok(true) => stamped = Some(env.to_json()),
                Ok(false) => {}
            }
            if !matches!(env.message, Message::RunFinished(_)) {
                cache_insert(&mut self.observed, &run_id);
            }
        }
        let text = stamped.as_deref().unwrap_or(text);
        let event = NewEvent::from_parsed(text, parsed)?;
        let mut event = event
            .with_app_hint(self.app.clone())
            .with_claim(Some(Arc::clone(&self.token)));
        // Back-pressure without blocking the runtime: retry while the queue is full.
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
