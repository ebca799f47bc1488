//! The WebSocket transport: one background thread with its own small tokio
//! runtime (so it works whatever runtime — or runtimes — the host uses), lazy
//! connect, `hello` / `hello.ack`, replay on attach, control frames, background
//! reconnect, and fail-open on every failure.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures_util::{FutureExt, SinkExt, StreamExt};
use mindgate_protocol::{
    ClientVersions, Envelope, GapMarker, GraphHint, Hello, HelloAck, Message, PROTOCOL_VERSION,
    ParseResult, ResumeAction, WILDCARD_RUN_ID, capability, parse_envelope,
};
use serde_json::Map;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::buffer::Gap;
use crate::gate::Decision;
use crate::session::{SDK_NAME, SDK_VERSION, Shared};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Capabilities announced in `hello`: every gate control.
pub const CAPABILITIES: &[&str] = &capability::GATE_CONTROLS;

/// Starts the transport thread. Failures degrade to "detached" with a warning.
pub(crate) fn spawn(shared: Arc<Shared>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            shared.warner.warn(
                "transport-runtime",
                &format!("cannot start the transport runtime ({e}); staying detached"),
            );
            return;
        }
    };
    let _ = shared.runtime.set(runtime.handle().clone());
    let for_thread = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("mindgate-sdk".to_owned())
        .spawn(move || {
            let shutdown = for_thread.shutdown.clone();
            runtime.block_on(supervise(for_thread));
            // Let timers and flush tasks end with the runtime.
            drop(shutdown);
        });
    if let Err(e) = spawned {
        shared.warner.warn(
            "transport-thread",
            &format!("cannot start the transport thread ({e}); staying detached"),
        );
    }
}

async fn supervise(shared: Arc<Shared>) {
    let shutdown = shared.shutdown.clone();
    loop {
        if shutdown.is_cancelled() {
            break;
        }
        // A kick stored while the previous attempt ran is obsolete: this is the attempt.
        let _ = shared.kick.notified().now_or_never();
        tokio::select! {
            _ = attempt(&shared) => {}
            _ = shutdown.cancelled() => {}
        }
        on_detached(&shared);
        tokio::select! {
            _ = shared.kick.notified() => {}
            _ = tokio::time::sleep(shared.config.retry_interval) => {}
            _ = shutdown.cancelled() => break,
        }
    }
    on_detached(&shared);
}

async fn attempt(shared: &Arc<Shared>) {
    let connect = tokio_tungstenite::connect_async(shared.url.as_str());
    let mut socket: Socket =
        match tokio::time::timeout(shared.config.connect_timeout, connect).await {
            Ok(Ok((socket, _response))) => socket,
            Ok(Err(e)) => {
                shared.warner.warn(
                    "transport-connect",
                    &format!("no viewer at {} ({e}); staying detached", shared.url),
                );
                return;
            }
            Err(_) => {
                shared.warner.warn(
                "transport-timeout",
                &format!(
                    "the viewer at {} did not accept the connection within {} ms; staying detached",
                    shared.url,
                    shared.config.connect_timeout.as_millis()
                ),
            );
                return;
            }
        };
    if socket.send(WsMessage::text(hello(shared))).await.is_err() {
        return;
    }
    let ack = match tokio::time::timeout(
        shared.config.handshake_timeout,
        await_ack(shared, &mut socket),
    )
    .await
    {
        Ok(Some(ack)) => ack,
        Ok(None) => return,
        Err(_) => {
            shared.warner.warn(
                "transport-ack-timeout",
                &"the viewer did not complete the handshake in time; staying detached",
            );
            return;
        }
    };
    on_attached(shared, ack);
    pump(shared, socket).await;
}

fn hello(shared: &Shared) -> String {
    let (seq, token) = match shared.core.lock() {
        Ok(mut core) => {
            let seq = core.seq;
            core.seq += 1;
            (seq, core.session_token.clone())
        }
        Err(_) => (0, None),
    };
    Envelope::new(
        WILDCARD_RUN_ID,
        seq,
        Message::Hello(Hello {
            versions: ClientVersions {
                protocol: PROTOCOL_VERSION,
                client: SDK_VERSION.to_owned(),
                extra: Map::new(),
            },
            capabilities: CAPABILITIES.iter().map(|c| (*c).to_owned()).collect(),
            app: Some(shared.config.app_name.clone()),
            sdk: Some(mindgate_protocol::SdkInfo {
                name: SDK_NAME.to_owned(),
                version: SDK_VERSION.to_owned(),
                extra: Map::new(),
            }),
            resume_token: token,
            extra: Map::new(),
        }),
    )
    .to_json()
}

/// Reads frames until `hello.ack`; anything else before it is ignored.
async fn await_ack(shared: &Shared, socket: &mut Socket) -> Option<HelloAck> {
    while let Some(frame) = socket.next().await {
        let text = match frame {
            Ok(WsMessage::Text(t)) => t,
            Ok(WsMessage::Close(_)) | Err(_) => return None,
            Ok(_) => continue,
        };
        match parse_envelope(text.as_str()) {
            ParseResult::Ok(env) => {
                if let Message::HelloAck(ack) = env.message {
                    if ack.versions.protocol != PROTOCOL_VERSION {
                        shared.warner.warn(
                            "transport-version",
                            &format!(
                                "the viewer acked protocol v{}, this SDK speaks v{PROTOCOL_VERSION}; staying detached",
                                ack.versions.protocol
                            ),
                        );
                        return None;
                    }
                    return Some(ack);
                }
            }
            ParseResult::VersionMismatch { received } => {
                shared.warner.warn(
                    "transport-version",
                    &format!(
                        "the viewer speaks protocol v{received}, this SDK speaks v{PROTOCOL_VERSION}; staying detached"
                    ),
                );
                return None;
            }
            _ => {}
        }
    }
    None
}

fn on_attached(shared: &Arc<Shared>, ack: HelloAck) {
    if let Ok(mut core) = shared.core.lock() {
        if let Some(token) = ack.session_token.filter(|t| !t.is_empty()) {
            // Kept across reconnects: echoing it proves this app owns its runs.
            core.session_token = Some(token);
        }
        core.ring.attach();
    }
    shared.gates.arm(ack.breakpoints, ack.mode);
    shared.attached.store(true, Ordering::Release);
    shared.attached_tx.send_replace(true);
    shared.wake.notify_one();
    tracing::debug!(target: "mindgate_sdk", url = %shared.url, "attached to the viewer");
}

/// Fail-open: no viewer, no holds, no breakpoints until the next `hello.ack`.
fn on_detached(shared: &Arc<Shared>) {
    let was = shared.attached.swap(false, Ordering::AcqRel);
    if let Ok(mut core) = shared.core.lock() {
        core.ring.detach();
    }
    shared.gates.disarm();
    shared.release_all();
    if was {
        shared.attached_tx.send_replace(false);
        tracing::debug!(target: "mindgate_sdk", "detached from the viewer");
    }
}

async fn pump(shared: &Arc<Shared>, socket: Socket) {
    let (mut sink, mut stream) = socket.split();
    let reader = async {
        while let Some(frame) = stream.next().await {
            match frame {
                Ok(WsMessage::Text(text)) => handle_control(shared, text.as_str()),
                Ok(WsMessage::Close(_)) | Err(_) => break,
                Ok(_) => {}
            }
        }
    };
    let writer = async {
        let mut batch = Vec::new();
        loop {
            let gap = match shared.core.lock() {
                Ok(mut core) => match core.ring.take(&mut batch) {
                    Some(gap) => gap.map(|g| (g, take_seq(&mut core.seq))),
                    None => return,
                },
                Err(_) => return,
            };
            if batch.is_empty() && gap.is_none() {
                shared.wake.notified().await;
                continue;
            }
            if let Some((gap, seq)) = gap
                && sink
                    .feed(WsMessage::text(gap_marker(&gap, seq)))
                    .await
                    .is_err()
            {
                return;
            }
            for frame in batch.drain(..) {
                if sink.feed(WsMessage::text(frame.render())).await.is_err() {
                    return;
                }
            }
            if sink.flush().await.is_err() {
                return;
            }
            shared.sent.fetch_max(sent_mark(shared), Ordering::AcqRel);
        }
    };
    tokio::select! {
        _ = reader => {}
        _ = writer => {}
    }
    // Detach before closing: held gates are released the moment the socket drops.
    on_detached(shared);
    let mut socket = match sink.reunite(stream) {
        Ok(s) => s,
        Err(_) => return,
    };
    let _ = tokio::time::timeout(std::time::Duration::from_millis(100), socket.close(None)).await;
}

/// The writer's cursor after a flush: everything taken so far was written.
fn sent_mark(shared: &Shared) -> u64 {
    shared
        .core
        .lock()
        .map(|c| c.ring.taken_total())
        .unwrap_or_default()
}

fn take_seq(seq: &mut u64) -> u64 {
    let s = *seq;
    *seq += 1;
    s
}

fn gap_marker(gap: &Gap, seq: u64) -> String {
    Envelope::new(
        gap.run_id.as_ref(),
        seq,
        Message::GraphHint(GraphHint {
            nodes: Vec::new(),
            gap: Some(GapMarker {
                dropped_count: gap.count,
                from_seq: gap.from_seq,
                to_seq: gap.to_seq,
                reason: Some("buffer-full".to_owned()),
                extra: Map::new(),
            }),
            extra: Map::new(),
        }),
    )
    .to_json()
}

/// Applies one viewer → app frame. Unknown or malformed frames are ignored.
pub(crate) fn handle_control(shared: &Arc<Shared>, text: &str) {
    let env = match parse_envelope(text) {
        ParseResult::Ok(env) => env,
        ParseResult::Invalid { reason, .. } => {
            shared.warner.warn(
                "transport-invalid",
                &format!("ignoring an invalid frame: {reason}"),
            );
            return;
        }
        // Unknown types and mid-stream version noise: tolerate.
        _ => return,
    };
    match env.message {
        Message::ExecResume(resume) => {
            let decision = match resume.action {
                ResumeAction::Continue => Decision::Continue,
                ResumeAction::Retry => Decision::Retry,
                ResumeAction::Abort => Decision::Abort,
                ResumeAction::Inject => {
                    Decision::Inject(resume.output.unwrap_or(serde_json::Value::Null))
                }
            };
            shared.settle(&resume.pause_id, decision, resume.request_id, resume.input);
        }
        Message::BreakpointSet(change) => shared.gates.add(change.matcher),
        Message::BreakpointClear(change) => shared.gates.remove(&change.matcher),
        Message::ModeSet(mode) => shared.gates.set_mode(mode.mode),
        Message::HelloAck(ack) => shared.gates.arm(ack.breakpoints, ack.mode),
        _ => {}
    }
}
