//! A scripted fake viewer: a small tokio-tungstenite server on 127.0.0.1:0 that
//! acks `hello`, records every frame, and sends controls on demand.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use mindgate_protocol::{
    BreakpointChange, BreakpointMatcher, Envelope, ExecPaused, ExecResume, HelloAck, Message,
    ModeSet, ParseResult, ResumeAction, RunMode, ViewerVersions, WILDCARD_RUN_ID, parse_envelope,
};
use mindgate_sdk::{Client, Config};
use serde_json::{Map, Value};
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc};
use tokio_tungstenite::tungstenite::Message as Ws;

/// How long a test waits for a frame before failing.
pub const WAIT: Duration = Duration::from_secs(5);

enum Cmd {
    Send(String),
    Close,
}

struct State {
    frames: Mutex<Vec<Envelope>>,
    notify: Notify,
    conn: Mutex<Option<mpsc::UnboundedSender<Cmd>>>,
    connections: AtomicUsize,
    refusing: AtomicBool,
    breakpoints: Mutex<Vec<BreakpointMatcher>>,
    mode: Mutex<RunMode>,
    token: String,
}

/// The fake viewer.
pub struct FakeViewer {
    pub url: String,
    state: Arc<State>,
}

impl FakeViewer {
    /// A viewer that arms nothing.
    pub async fn start() -> Self {
        Self::with(Vec::new(), RunMode::Run).await
    }

    /// A viewer that arms pause-on-error, as the real one does by default.
    pub async fn pause_on_error() -> Self {
        Self::with(vec![BreakpointMatcher::on_error()], RunMode::Run).await
    }

    /// A viewer whose `hello.ack` carries these breakpoints and mode.
    pub async fn with(breakpoints: Vec<BreakpointMatcher>, mode: RunMode) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            frames: Mutex::new(Vec::new()),
            notify: Notify::new(),
            conn: Mutex::new(None),
            connections: AtomicUsize::new(0),
            refusing: AtomicBool::new(false),
            breakpoints: Mutex::new(breakpoints),
            mode: Mutex::new(mode),
            token: format!("tok-{}", addr.port()),
        });
        let st = state.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let st = st.clone();
                tokio::spawn(async move { serve(st, tcp).await });
            }
        });
        FakeViewer {
            url: format!("ws://{addr}/ingest"),
            state,
        }
    }

    /// A client pointed at this viewer, isolated from the process environment.
    pub fn config(&self) -> Config {
        Config::default()
            .app("sdk-test")
            .url(self.url.clone())
            .env(std::iter::empty::<(String, String)>())
            .retry_interval(Duration::from_millis(50))
    }

    /// A connected client (waits for the handshake).
    pub async fn client(&self) -> Client {
        self.client_with(self.config()).await
    }

    /// A connected client with a custom config.
    pub async fn client_with(&self, config: Config) -> Client {
        let c = Client::new(config);
        assert!(c.ready(WAIT).await, "client did not attach");
        c
    }

    /// The session token this viewer hands out.
    pub fn session_token(&self) -> &str {
        &self.state.token
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Every frame received so far.
    pub fn frames(&self) -> Vec<Envelope> {
        self.state.frames.lock().unwrap().clone()
    }

    /// Every frame of one run, in arrival order.
    pub fn run_frames(&self, run_id: &str) -> Vec<Envelope> {
        self.frames()
            .into_iter()
            .filter(|e| e.run_id == run_id)
            .collect()
    }

    /// Waits until `pred` holds for `n` recorded frames; returns the matches.
    pub async fn wait_n(&self, n: usize, pred: impl Fn(&Envelope) -> bool) -> Vec<Envelope> {
        let deadline = Instant::now() + WAIT;
        loop {
            let notified = self.state.notify.notified();
            let matches: Vec<Envelope> = self.frames().into_iter().filter(|e| pred(e)).collect();
            if matches.len() >= n {
                return matches;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out waiting for {n} frame(s); got {}: {:#?}",
                matches.len(),
                self.frames()
                    .iter()
                    .map(|f| f.type_name())
                    .collect::<Vec<_>>()
            );
            let _ = tokio::time::timeout(left, notified).await;
        }
    }

    /// Waits for the first frame matching `pred`.
    pub async fn wait_for(&self, pred: impl Fn(&Envelope) -> bool) -> Envelope {
        self.wait_n(1, pred).await.remove(0)
    }

    /// Waits for the `n`th (1-based) `exec.paused`; returns its run id and payload.
    pub async fn pause(&self, n: usize) -> (String, ExecPaused) {
        let all = self
            .wait_n(n, |e| matches!(e.message, Message::ExecPaused(_)))
            .await;
        let env = all[n - 1].clone();
        match env.message {
            Message::ExecPaused(p) => (env.run_id, p),
            _ => unreachable!(),
        }
    }

    /// Sends one control frame on the current connection.
    pub fn send(&self, run_id: &str, message: Message) {
        let text = Envelope::new(run_id, 0, message).to_json();
        self.send_raw(text);
    }

    /// Sends raw text on the current connection.
    pub fn send_raw(&self, text: String) {
        if let Some(tx) = self.state.conn.lock().unwrap().as_ref() {
            let _ = tx.send(Cmd::Send(text));
        }
    }

    /// Releases a pause.
    pub fn resume(
        &self,
        run_id: &str,
        pause_id: &str,
        action: ResumeAction,
        output: Option<Value>,
    ) {
        self.send(
            run_id,
            Message::ExecResume(ExecResume {
                pause_id: pause_id.to_owned(),
                action,
                output,
                input: None,
                request_id: Some(format!("req-{pause_id}")),
                extra: Map::new(),
            }),
        );
    }

    /// `breakpoint.set`.
    pub fn set_breakpoint(&self, matcher: BreakpointMatcher) {
        self.send(
            WILDCARD_RUN_ID,
            Message::BreakpointSet(BreakpointChange {
                matcher,
                extra: Map::new(),
            }),
        );
    }

    /// `mode.set`.
    pub fn set_mode(&self, mode: RunMode) {
        self.send(
            WILDCARD_RUN_ID,
            Message::ModeSet(ModeSet {
                mode,
                extra: Map::new(),
            }),
        );
    }

    /// Changes what the next `hello.ack` arms.
    pub fn arm_next(&self, breakpoints: Vec<BreakpointMatcher>, mode: RunMode) {
        *self.state.breakpoints.lock().unwrap() = breakpoints;
        *self.state.mode.lock().unwrap() = mode;
    }

    /// While set, new connections are dropped before the handshake (the client stays detached).
    pub fn set_refusing(&self, refusing: bool) {
        self.state.refusing.store(refusing, Ordering::SeqCst);
    }

    /// Closes the current connection and refuses new ones; waits until `client` detached.
    pub async fn go_away(&self, client: &Client) {
        self.set_refusing(true);
        self.disconnect();
        let deadline = Instant::now() + WAIT;
        while client.is_attached() {
            assert!(Instant::now() < deadline, "client did not detach");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Accepts connections again and waits until `client` is attached.
    pub async fn come_back(&self, client: &Client) {
        self.set_refusing(false);
        assert!(client.ready(WAIT).await, "client did not re-attach");
    }

    /// Closes the current connection from the viewer's side.
    pub fn disconnect(&self) {
        if let Some(tx) = self.state.conn.lock().unwrap().take() {
            let _ = tx.send(Cmd::Close);
        }
    }
}

async fn serve(st: Arc<State>, tcp: tokio::net::TcpStream) {
    if st.refusing.load(Ordering::SeqCst) {
        return;
    }
    let Ok(ws) = tokio_tungstenite::accept_async(tcp).await else {
        return;
    };
    st.connections.fetch_add(1, Ordering::SeqCst);
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut acked = false;
    loop {
        tokio::select! {
            frame = stream.next() => {
                let Some(Ok(frame)) = frame else { break };
                let Ws::Text(text) = frame else { continue };
                let ParseResult::Ok(env) = parse_envelope(text.as_str()) else { continue };
                let is_hello = matches!(env.message, Message::Hello(_));
                st.frames.lock().unwrap().push(env);
                if is_hello && !acked {
                    acked = true;
                    let ack = Envelope::new(WILDCARD_RUN_ID, 0, Message::HelloAck(HelloAck {
                        versions: ViewerVersions { protocol: 1, viewer: "fake".into(), extra: Map::new() },
                        capabilities: vec!["pause".into()],
                        breakpoints: st.breakpoints.lock().unwrap().clone(),
                        mode: *st.mode.lock().unwrap(),
                        session_token: Some(st.token.clone()),
                        hub_capabilities: None,
                        extra: Map::new(),
                    }));
                    // Controllable before the client can see the ack (and hold a gate).
                    *st.conn.lock().unwrap() = Some(tx.clone());
                    if sink.send(Ws::text(ack.to_json())).await.is_err() { break; }
                }
                st.notify.notify_waiters();
            }
            cmd = rx.recv() => match cmd {
                Some(Cmd::Send(text)) => { if sink.send(Ws::text(text)).await.is_err() { break; } }
                Some(Cmd::Close) | None => break,
            }
        }
    }
    // Dropping both halves closes the TCP connection abruptly, like a crashed viewer.
}
