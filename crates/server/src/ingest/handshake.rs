//! The handshake of an `/ingest` connection: the first frame must be a `hello` of this
//! protocol version, within the hello timeout, and at most [`MAX_PENDING_HELLOS`]
//! connections wait for theirs at once.

use std::sync::Arc;

use axum::extract::ws::{Message as WsMessage, WebSocket};
use futures_util::StreamExt;
use mindgate_protocol::{Envelope, Hello, Message, ParseResult, parse_envelope};
use mindgate_store::check_hello;

use super::{MAX_PENDING_HELLOS, close, close_code};
use crate::state::{AppState, Dropped, Stats};

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

/// Waits for the connection's `hello` and checks it; `None` when the connection was
/// closed (with the reason it was told) or the server stops.
pub(super) async fn receive_hello(socket: &mut WebSocket, state: &AppState) -> Option<Hello> {
    let Some(pending) = PendingHello::enter(&state.stats) else {
        let n = state.stats.drop_frame(Dropped::PendingHelloLimit);
        if n <= 10 || n.is_multiple_of(1_000) {
            tracing::warn!(
                total = n,
                "refused an /ingest connection: {MAX_PENDING_HELLOS} are waiting for their hello"
            );
        }
        let reason = format!("{MAX_PENDING_HELLOS} connections are waiting for their hello; retry");
        close(socket, close_code::TRY_AGAIN_LATER, &reason).await;
        return None;
    };
    let first = tokio::select! {
        _ = state.shutdown.cancelled() => return None,
        r = tokio::time::timeout(state.config.hello_timeout, socket.next()) => r,
    };
    let refusal = match first {
        Err(_) => Some((
            close_code::POLICY,
            format!(
                "no hello within {} ms",
                state.config.hello_timeout.as_millis()
            ),
        )),
        Ok(None) => None,
        Ok(Some(Err(e))) => crate::ws_close::for_read_error(&e),
        Ok(Some(Ok(msg))) => match hello_of(state, msg) {
            Ok(hello) => {
                drop(pending);
                return Some(hello);
            }
            Err(refusal) => Some(refusal),
        },
    };
    if let Some((code, reason)) = refusal {
        close(socket, code, &reason).await;
    }
    None
}

/// The `hello` the first frame carries, or the close code and reason to refuse it with.
fn hello_of(state: &AppState, msg: WsMessage) -> Result<Hello, (u16, String)> {
    let text = match msg {
        WsMessage::Text(t) => t.as_str().to_owned(),
        WsMessage::Binary(b) => String::from_utf8(b.to_vec())
            .map_err(|_| (close_code::POLICY, "expected a hello text frame".to_owned()))?,
        _ => {
            return Err((close_code::POLICY, "expected a hello text frame".to_owned()));
        }
    };
    match parse_envelope(&text) {
        ParseResult::Ok(Envelope {
            message: Message::Hello(hello),
            ..
        }) => {
            if let Err(refusal) = check_hello(&hello) {
                state.stats.drop_frame(refusal.into());
                return Err((close_code::POLICY, format!("hello refused: {refusal}")));
            }
            if hello.versions.protocol != mindgate_protocol::PROTOCOL_VERSION {
                return Err((
                    close_code::PROTOCOL,
                    format!(
                        "protocol version mismatch: this viewer speaks GraphMind protocol v{}, the client announced v{}",
                        mindgate_protocol::PROTOCOL_VERSION,
                        hello.versions.protocol
                    ),
                ));
            }
            Ok(hello)
        }
        ParseResult::VersionMismatch { received } => Err((
            close_code::PROTOCOL,
            format!(
                "protocol version mismatch: this viewer speaks gm {}, the client sent gm {received}",
                mindgate_protocol::PROTOCOL_VERSION
            ),
        )),
        _ => Err((
            close_code::POLICY,
            "the first frame must be a valid hello".to_owned(),
        )),
    }
}
