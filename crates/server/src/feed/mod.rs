//! `/ws/ui`: the live viewer feed (message set in `docs/ui-feed.md`).
//!
//! A run subscribe follows the run's graph (`crate::live_graphs`: a snapshot,
//! then deltas); one with `events: true` replays and tails its events.
//!
//! Race-free replay: the connection subscribes to committed batches *before*
//! it reads any history; after replaying a run it remembers the highest `seq`
//! sent and drops live events at or below it. If the connection falls behind
//! the live feed, it re-reads what it missed from the database.
//!
//! Debug state (apps, pauses, breakpoints, mode) goes out as one `state` on
//! connect, then as small deltas serialized once by the hub for every viewer
//! (a whole `state` again only when a viewer falls behind them).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message as WsMessage, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use mindgate_errors::ErrorCode;
use mindgate_protocol::{Message, ParseResult, WILDCARD_RUN_ID, parse_envelope};
use mindgate_store::{Committed, RunFilter, RunSummary, StoredEvent};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::hub::{ResumeRequest, VIEWER_VERSION, resume_answer};

use crate::live_graphs::{GraphSubscription, SubscribeRefusal};
use crate::state::AppState;

/// How often coalesced `run.update`s are flushed.
const RUN_UPDATE_EVERY: Duration = Duration::from_millis(250);
/// Most runs in a `runs` reply.
const RUNS_REPLY_LIMIT: u32 = 200;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventMsg<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    run_id: &'a str,
    event: &'a StoredEvent,
}

struct Feed {
    state: AppState,
    authorized: bool,
    /// Answers of resume requests, which wait for the app off the feed loop.
    replies: tokio::sync::mpsc::UnboundedSender<String>,
    /// run id → highest seq sent.
    runs: HashMap<String, Option<u64>>,
    list: bool,
    dirty: HashMap<String, RunSummary>,
    /// The run followed as a graph: snapshot, then deltas.
    graph: Option<GraphSubscription>,
}

/// The next delta of the projection-mode subscription, if there is one.
async fn next_graph_delta(graph: &mut Option<GraphSubscription>) -> Result<Arc<str>, RecvError> {
    match graph {
        Some(sub) => sub.deltas.recv().await,
        None => std::future::pending().await,
    }
}

/// Serves one viewer connection. `authorized` = it presented the control token; `watcher` =
/// it counts as somebody who can act on gates (the control token, or the agent token of an MCP
/// client with control), so gates held only by pause on error keep holding while it is open.
pub async fn handle(mut socket: WebSocket, state: AppState, authorized: bool, watcher: bool) {
    // Subscribe to live commits first: everything committed from now on reaches us.
    let mut live = state.feed.subscribe();
    // Deltas before the snapshot: each is idempotent, so none is missed.
    let mut hub_deltas = state.hub.subscribe_deltas();
    let (replies, mut reply_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    // Somebody who can act is watching: default gates hold.
    let _watcher = watcher.then(|| state.hub.watch_control());
    let mut feed = Feed {
        state: state.clone(),
        authorized,
        replies,
        runs: HashMap::new(),
        list: false,
        dirty: HashMap::new(),
        graph: None,
    };
    let welcome = json!({"type": "welcome", "version": VIEWER_VERSION, "readOnly": !authorized});
    if send(&mut socket, welcome.to_string()).await.is_err()
        || feed.send_state(&mut socket).await.is_err()
    {
        return;
    }
    let mut tick = tokio::time::interval(RUN_UPDATE_EVERY);
    loop {
        let result = tokio::select! {
            _ = state.shutdown.cancelled() => break,
            msg = socket.next() => match msg {
                None => break,
                Some(Err(e)) => {
                    if let Some((code, reason)) = crate::ws_close::for_read_error(&e) {
                        tracing::debug!(code, %reason, "bad frame from a viewer; closing");
                        crate::ws_close::send(&mut socket, code, &reason).await;
                        return;
                    }
                    break;
                }
                Some(Ok(WsMessage::Close(_))) => break,
                Some(Ok(WsMessage::Text(text))) => feed.incoming(&mut socket, text.as_str()).await,
                Some(Ok(_)) => Ok(()),
            },
            batch = live.recv() => match batch {
                // Commits may have been missed (another instance's feed was cut): re-read.
                Ok(batch) if batch.resync => feed.catch_up(&mut socket).await,
                Ok(batch) => feed.live(&mut socket, &batch).await,
                Err(RecvError::Lagged(n)) => {
                    tracing::debug!(missed = n, "viewer fell behind; catching up from the store");
                    feed.catch_up(&mut socket).await
                }
                Err(RecvError::Closed) => break,
            },
            delta = hub_deltas.recv() => match delta {
                Ok(text) => send_deltas(&mut socket, text, &mut hub_deltas, &mut feed).await,
                Err(RecvError::Lagged(n)) => {
                    tracing::debug!(missed = n, "viewer fell behind the hub; sending the whole state");
                    feed.send_state(&mut socket).await
                }
                Err(RecvError::Closed) => break,
            },
            Some(reply) = reply_rx.recv() => send(&mut socket, reply).await,
            delta = next_graph_delta(&mut feed.graph) => match delta {
                Ok(text) => send(&mut socket, text.to_string()).await,
                Err(RecvError::Lagged(n)) => {
                    tracing::debug!(missed = n, "viewer fell behind the live graph; sending a new snapshot");
                    match feed.graph.take() {
                        Some(sub) => feed.subscribe_graph(&mut socket, sub.run_id.clone()).await,
                        None => Ok(()),
                    }
                }
                Err(RecvError::Closed) => {
                    feed.graph = None;
                    Ok(())
                }
            },
            _ = tick.tick() => feed.flush_updates(&mut socket).await,
        };
        if result.is_err() {
            break;
        }
    }
    let _ = socket.send(WsMessage::Close(None)).await;
}

/// Most deltas written before one flush (a burst of app churn costs each
/// viewer one write instead of one per delta).
const DELTAS_PER_FLUSH: usize = 256;

/// Sends `first` and whatever further deltas are already queued (up to
/// [`DELTAS_PER_FLUSH`]) with one flush; a viewer that fell behind gets the
/// whole state instead.
async fn send_deltas(
    socket: &mut WebSocket,
    first: Arc<str>,
    deltas: &mut tokio::sync::broadcast::Receiver<Arc<str>>,
    feed: &mut Feed,
) -> Result<(), ()> {
    use tokio::sync::broadcast::error::TryRecvError;
    let mut lagged = false;
    socket
        .feed(WsMessage::Text(Utf8Bytes::from(first.as_ref())))
        .await
        .map_err(|_| ())?;
    for _ in 1..DELTAS_PER_FLUSH {
        match deltas.try_recv() {
            Ok(text) => socket
                .feed(WsMessage::Text(Utf8Bytes::from(text.as_ref())))
                .await
                .map_err(|_| ())?,
            Err(TryRecvError::Lagged(_)) => {
                lagged = true;
                break;
            }
            Err(TryRecvError::Empty | TryRecvError::Closed) => break,
        }
    }
    socket.flush().await.map_err(|_| ())?;
    if lagged {
        tracing::debug!("viewer fell behind the hub; sending the whole state");
        feed.send_state(socket).await?;
    }
    Ok(())
}

async fn send(socket: &mut WebSocket, text: String) -> Result<(), ()> {
    socket
        .send(WsMessage::Text(Utf8Bytes::from(text)))
        .await
        .map_err(|_| ())
}

/// Whether a run subscribe asks for the run's events (`events: true`, or the
/// older `projection: false`) instead of its graph.
fn wants_events(msg: &Value) -> bool {
    msg.get("events").and_then(Value::as_bool) == Some(true)
        || msg.get("projection").and_then(Value::as_bool) == Some(false)
}

/// `resume.refused`: an `exec.refused` event of a run followed as a graph.
fn resume_refused(ev: &StoredEvent) -> Value {
    let payload = ev.payload_value();
    json!({
        "type": "resume.refused",
        "runId": ev.run_id,
        "seq": ev.seq,
        "pauseId": payload.get("pauseId"),
        "code": payload.get("code"),
        "message": payload.get("message"),
    })
}

fn error_msg(message: &str, code: ErrorCode, request_id: Option<&Value>) -> String {
    code.feed_message(message, request_id).to_string()
}

impl Feed {
    async fn send_state(&mut self, socket: &mut WebSocket) -> Result<(), ()> {
        let snap = self.state.hub.snapshot();
        let mut v = serde_json::to_value(&snap).unwrap_or_else(|_| json!({}));
        v["type"] = json!("state");
        send(socket, v.to_string()).await
    }

    async fn incoming(&mut self, socket: &mut WebSocket, text: &str) -> Result<(), ()> {
        let Ok(msg) = serde_json::from_str::<Value>(text) else {
            return send(
                socket,
                error_msg("message is not JSON", ErrorCode::BadRequest, None),
            )
            .await;
        };
        let run_id = msg.get("runId").and_then(Value::as_str).map(str::to_owned);
        match msg.get("type").and_then(Value::as_str) {
            Some("subscribe") => match run_id {
                Some(id) if id == WILDCARD_RUN_ID => self.subscribe_list(socket).await,
                // A run's graph by default; its events when asked for.
                Some(id) if wants_events(&msg) => self.subscribe_run(socket, id).await,
                Some(id) => self.subscribe_graph(socket, id).await,
                None => {
                    send(
                        socket,
                        error_msg("subscribe needs a runId", ErrorCode::BadRequest, None),
                    )
                    .await
                }
            },
            Some("unsubscribe") => {
                match run_id.as_deref() {
                    Some(WILDCARD_RUN_ID) => {
                        self.list = false;
                        self.dirty.clear();
                    }
                    Some(id) => {
                        self.runs.remove(id);
                        if self.graph.as_ref().is_some_and(|g| g.run_id == id) {
                            self.graph = None;
                        }
                    }
                    None => {}
                }
                Ok(())
            }
            Some("control") => self.control(socket, &msg).await,
            Some("hold.unwatched") => self.hold_unwatched(socket, &msg).await,
            _ => {
                send(
                    socket,
                    error_msg("unknown message type", ErrorCode::BadRequest, None),
                )
                .await
            }
        }
    }

    async fn subscribe_list(&mut self, socket: &mut WebSocket) -> Result<(), ()> {
        self.list = true;
        let store = self.state.store.clone();
        let filter = RunFilter {
            limit: Some(RUNS_REPLY_LIMIT),
            ..Default::default()
        };
        let runs = tokio::task::spawn_blocking(move || store.list_runs(&filter))
            .await
            .ok()
            .and_then(Result::ok)
            .map(|l| l.runs)
            .unwrap_or_default();
        send(socket, json!({"type": "runs", "runs": runs}).to_string()).await
    }

    async fn subscribe_run(&mut self, socket: &mut WebSocket, run_id: String) -> Result<(), ()> {
        send(
            socket,
            json!({"type": "replay.start", "runId": run_id}).to_string(),
        )
        .await?;
        let last = self.send_stored(socket, &run_id, None).await?;
        send(
            socket,
            json!({"type": "replay.end", "runId": run_id, "lastSeq": last}).to_string(),
        )
        .await?;
        self.runs.insert(run_id, last);
        Ok(())
    }

    /// The run's graph (the default run subscribe): `graph.snapshot` parts,
    /// then a `graph.delta` per committed batch with events of the run. Replaces an
    /// earlier projection-mode subscription of this viewer.
    async fn subscribe_graph(&mut self, socket: &mut WebSocket, run_id: String) -> Result<(), ()> {
        self.graph = None;
        let state = &self.state;
        let sub = match state
            .live_graphs
            .subscribe(&state.store, &state.feed, &state.shutdown, &run_id)
            .await
        {
            Ok(sub) => sub,
            Err(refusal) => {
                let bounds = state.live_graphs.bounds();
                let message = match refusal {
                    SubscribeRefusal::TooManyRuns => format!(
                        "at most {} runs are followed as graphs at once; try again once a viewer leaves one, or subscribe with events: true",
                        bounds.max_runs
                    ),
                    SubscribeRefusal::TooBig => format!(
                        "the followed run graphs hold {} nodes and instances, the most kept at once; try again once a viewer leaves one, or subscribe with events: true",
                        bounds.max_items
                    ),
                    SubscribeRefusal::ShuttingDown => "the server is shutting down".to_owned(),
                };
                return send(socket, error_msg(&message, ErrorCode::Unavailable, None)).await;
            }
        };
        for part in sub.snapshot.iter() {
            socket
                .send(WsMessage::Text(part.clone()))
                .await
                .map_err(|_| ())?;
        }
        self.graph = Some(sub);
        Ok(())
    }

    /// Sends stored events of `run_id` after `after`; returns the highest seq sent (or `after`).
    async fn send_stored(
        &mut self,
        socket: &mut WebSocket,
        run_id: &str,
        after: Option<u64>,
    ) -> Result<Option<u64>, ()> {
        let mut cursor = after;
        loop {
            let store = self.state.store.clone();
            let id = run_id.to_owned();
            let page = tokio::task::spawn_blocking(move || {
                store.events(&id, cursor, Some(mindgate_store::MAX_EVENT_PAGE))
            })
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
            let Some(page) = page else { return Ok(cursor) };
            for ev in &page.events {
                let msg = EventMsg {
                    ty: "event",
                    run_id,
                    event: ev,
                };
                send(socket, serde_json::to_string(&msg).map_err(|_| ())?).await?;
            }
            cursor = page.next_after_seq;
            if !page.has_more {
                return Ok(cursor);
            }
        }
    }

    async fn live(&mut self, socket: &mut WebSocket, batch: &Arc<Committed>) -> Result<(), ()> {
        if let Some(graph) = &self.graph {
            // A graph carries no events: the app's refusal of a resume is a message of its own.
            for ev in &batch.events {
                if ev.type_name == "exec.refused" && ev.run_id == graph.run_id {
                    send(socket, resume_refused(ev).to_string()).await?;
                }
            }
        }
        for ev in &batch.events {
            let Some(last) = self.runs.get_mut(&ev.run_id) else {
                continue;
            };
            if last.is_some_and(|l| ev.seq <= l) {
                continue;
            }
            *last = Some(ev.seq);
            let msg = EventMsg {
                ty: "event",
                run_id: &ev.run_id,
                event: ev,
            };
            send(socket, serde_json::to_string(&msg).map_err(|_| ())?).await?;
        }
        if self.list {
            for run in &batch.runs {
                self.dirty.insert(run.id.clone(), run.clone());
            }
        }
        for id in &batch.deleted {
            self.state.live_graphs.forget_idle(id);
            self.dirty.remove(id);
            self.runs.remove(id);
            send(
                socket,
                json!({"type": "run.deleted", "runId": id}).to_string(),
            )
            .await?;
        }
        Ok(())
    }

    async fn catch_up(&mut self, socket: &mut WebSocket) -> Result<(), ()> {
        let runs: Vec<(String, Option<u64>)> =
            self.runs.iter().map(|(k, v)| (k.clone(), *v)).collect();
        for (run_id, after) in runs {
            let last = self.send_stored(socket, &run_id, after).await?;
            self.runs.insert(run_id, last);
        }
        if self.list {
            self.dirty.clear();
            self.subscribe_list(socket).await?;
        }
        Ok(())
    }

    async fn flush_updates(&mut self, socket: &mut WebSocket) -> Result<(), ()> {
        if self.dirty.is_empty() {
            return Ok(());
        }
        let dirty = std::mem::take(&mut self.dirty);
        for run in dirty.into_values() {
            send(
                socket,
                json!({"type": "run.update", "run": run}).to_string(),
            )
            .await?;
        }
        Ok(())
    }

    /// `{"type": "hold.unwatched", "hold": bool}`: the viewer's persisted toggle.
    async fn hold_unwatched(&mut self, socket: &mut WebSocket, msg: &Value) -> Result<(), ()> {
        let request_id = msg.get("requestId");
        if !self.authorized {
            let text = "controls need the viewer token (connect with ?token=<token>)";
            return send(socket, error_msg(text, ErrorCode::Unauthorized, request_id)).await;
        }
        match msg.get("hold").and_then(Value::as_bool) {
            Some(hold) => {
                let state = self.state.clone();
                // A small file write: off the feed loop.
                let _ = tokio::task::spawn_blocking(move || {
                    crate::hub::viewer_settings::set_hold_unwatched(
                        &state.hub,
                        &state.config.home,
                        hold,
                    );
                })
                .await;
                Ok(())
            }
            None => {
                let text = "hold.unwatched needs a boolean `hold`";
                send(socket, error_msg(text, ErrorCode::BadRequest, request_id)).await
            }
        }
    }

    async fn control(&mut self, socket: &mut WebSocket, msg: &Value) -> Result<(), ()> {
        let request_id = msg.get("requestId");
        if !self.authorized {
            return send(
                socket,
                error_msg(
                    "controls need the viewer token (connect with ?token=<token>)",
                    ErrorCode::Unauthorized,
                    request_id,
                ),
            )
            .await;
        }
        let Some(envelope) = msg.get("envelope") else {
            return send(
                socket,
                error_msg(
                    "control needs an envelope",
                    ErrorCode::BadRequest,
                    request_id,
                ),
            )
            .await;
        };
        let env = match parse_envelope(&envelope.to_string()) {
            ParseResult::Ok(env) => env,
            other => {
                let text = format!("invalid control envelope: {}", other.verdict());
                return send(socket, error_msg(&text, ErrorCode::BadRequest, request_id)).await;
            }
        };
        let hub = &self.state.hub;
        match env.message {
            Message::ExecResume(r) => {
                if env.run_id == WILDCARD_RUN_ID {
                    return send(
                        socket,
                        error_msg(
                            "exec.resume must carry the run's id as runId",
                            ErrorCode::BadRequest,
                            request_id,
                        ),
                    )
                    .await;
                }
                let req = ResumeRequest {
                    action: r.action,
                    output: r.output,
                    input: r.input,
                    principal: crate::hub::Principal::Viewer,
                    request_id: r
                        .request_id
                        .or_else(|| request_id.and_then(Value::as_str).map(str::to_owned)),
                };
                // The answer waits for the app (bounded); the feed keeps flowing.
                let state = self.state.clone();
                let replies = self.replies.clone();
                let request_id = request_id.cloned();
                self.state.tasks.spawn(async move {
                    let reply = state
                        .hub
                        .resume_and_wait(&env.run_id, &r.pause_id, req, state.config.resume_wait)
                        .await;
                    let mut v = json!({"type": "resume.result"});
                    if let (Some(fields), Value::Object(answer)) =
                        (v.as_object_mut(), resume_answer(reply))
                    {
                        fields.extend(answer);
                    }
                    if let Some(id) = request_id {
                        v["requestId"] = id;
                    }
                    let _ = replies.send(v.to_string());
                });
                Ok(())
            }
            Message::BreakpointSet(b) => {
                hub.set_breakpoint(b.matcher);
                Ok(())
            }
            Message::BreakpointClear(b) => {
                hub.clear_breakpoint(b.matcher);
                Ok(())
            }
            Message::ModeSet(m) => {
                hub.set_mode(m.mode);
                Ok(())
            }
            _ => send(
                socket,
                error_msg(
                    "only exec.resume, breakpoint.set, breakpoint.clear and mode.set are controls",
                    ErrorCode::BadRequest,
                    request_id,
                ),
            )
            .await,
        }
    }
}
