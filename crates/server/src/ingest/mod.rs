//! `/ingest`: the WebSocket instrumented apps dial.
//!
//! Handshake first (`hello` → `hello.ack`), then events in, controls out.
//! Events are validated by the protocol crate, checked against run claims and
//! queued for the writer; the connection survives bad frames.

mod handshake;
mod session;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message as WsMessage, Utf8Bytes, WebSocket};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::hub::ConnId;
use crate::state::{AppState, Stats};
use session::Session;

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

/// Serves one ingest connection until it closes or the server stops.
pub async fn handle(mut socket: WebSocket, state: AppState) {
    let Some(hello) = handshake::receive_hello(&mut socket, &state).await else {
        return;
    };
    let attached = state.hub.attach(&hello);
    let conn = attached.conn;
    let app = hello.app.clone();
    tracing::info!(conn, app = ?app, "app attached");
    if socket
        .send(WsMessage::Text(Utf8Bytes::from(attached.ack)))
        .await
        .is_ok()
    {
        let mut session = Session::new(conn, app.map(Arc::from), Arc::from(attached.token));
        serve_app(&mut socket, &state, &mut session, attached.controls).await;
    }
    finish(&state, conn);
}

/// Events in, controls and pings out, until the app leaves, breaks the protocol, or the
/// server stops.
async fn serve_app(
    socket: &mut WebSocket,
    state: &AppState,
    session: &mut Session,
    mut controls: mpsc::UnboundedReceiver<String>,
) {
    let conn = session.conn;
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => {
                close(socket, close_code::GOING_AWAY, "server shutting down").await;
                return;
            }
            Some(frame) = controls.recv() => {
                if socket.send(WsMessage::Text(Utf8Bytes::from(frame))).await.is_err() {
                    return;
                }
            }
            _ = ping.tick() => {
                if socket.send(WsMessage::Ping(Default::default())).await.is_err() {
                    return;
                }
            }
            msg = socket.next() => {
                let msg = match msg {
                    None => return,
                    Some(Err(e)) => {
                        if let Some((code, reason)) = crate::ws_close::for_read_error(&e) {
                            tracing::warn!(conn, code, %reason, "bad frame from the app; closing");
                            close(socket, code, &reason).await;
                        } else {
                            tracing::debug!(conn, error = %e, "ingest read failed");
                        }
                        return;
                    }
                    Some(Ok(msg)) => msg,
                };
                if on_message(socket, state, session, &msg).await.is_break() {
                    return;
                }
            }
        }
    }
}

/// One message from the app: its frame handled, the notices it caused sent.
async fn on_message(
    socket: &mut WebSocket,
    state: &AppState,
    session: &mut Session,
    msg: &WsMessage,
) -> ControlFlow<()> {
    // Borrow the frame's text: no copy on the hot path.
    let text = match msg {
        WsMessage::Close(_) => return ControlFlow::Break(()),
        WsMessage::Text(t) => t.as_str(),
        WsMessage::Binary(b) => match std::str::from_utf8(b) {
            Ok(t) => t,
            Err(_) => {
                invalid(state, session.conn, "binary frame is not UTF-8");
                return ControlFlow::Continue(());
            }
        },
        _ => return ControlFlow::Continue(()),
    };
    let verdict = session.frame(state, text).await;
    let mut gone = false;
    for notice in session.notices.drain(..) {
        if socket
            .send(WsMessage::Text(Utf8Bytes::from(notice)))
            .await
            .is_err()
        {
            gone = true;
            break;
        }
    }
    if let Some((code, reason)) = verdict {
        close(socket, code, &reason).await;
        return ControlFlow::Break(());
    }
    if gone {
        return ControlFlow::Break(());
    }
    ControlFlow::Continue(())
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
