//! [`ServeProcess`]: the real `mindgate serve` binary, as a user runs it, for tests.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use serde_json::Value;

use crate::{FixtureHome, frames, wait};

/// How long the binary may take to listen and answer `/health`.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stopped server may take to exit after SIGTERM.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// `mindgate serve --port 0 --no-open` in a fresh [`FixtureHome`]: any free loopback port,
/// ready once `/health` answers. Killed when dropped; [`ServeProcess::stop`] stops it the way
/// a user does (SIGTERM) and returns its exit status.
pub struct ServeProcess {
    child: Child,
    agent: ureq::Agent,
    home: FixtureHome,
    port: u16,
    token: String,
    output: Arc<Mutex<String>>,
}

impl std::fmt::Debug for ServeProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeProcess")
            .field("pid", &self.child.id())
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl ServeProcess {
    /// Starts `bin serve --port 0 --no-open <args>` with `MINDGATE_HOME` set to a new home.
    ///
    /// # Panics
    /// When the binary cannot start, exits, or does not answer `/health` in
    /// [`START_TIMEOUT`]; the message holds its output.
    pub fn start(bin: &Path, args: &[&str]) -> ServeProcess {
        let home = FixtureHome::new();
        let mut child = Command::new(bin)
            .args(["serve", "--port", "0", "--otlp-port", "0", "--no-open"])
            .args(args)
            .env(mindgate_home::env::MINDGATE_HOME, home.path())
            .env(mindgate_home::env::MINDGATE_LOG, "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let output = Arc::new(Mutex::new(String::new()));
        let (url_tx, url_rx) = mpsc::channel::<String>();
        if let Some(stdout) = child.stdout.take() {
            let output = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if let Some(url) = line.strip_prefix("Mindgate viewer: ") {
                        let _ = url_tx.send(url.trim().to_owned());
                    }
                    push(&output, &line);
                }
            });
        }
        if let Some(mut stderr) = child.stderr.take() {
            let output = output.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    push(&output, &String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let logs =
            |output: &Arc<Mutex<String>>| output.lock().map(|s| s.clone()).unwrap_or_default();
        let url = match url_rx.recv_timeout(START_TIMEOUT) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("mindgate serve printed no viewer URL:\n{}", logs(&output));
            }
        };
        let (port, token) = parse_viewer_url(&url)
            .unwrap_or_else(|| panic!("unexpected viewer URL {url:?}:\n{}", logs(&output)));
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        let server = ServeProcess {
            child,
            agent,
            home,
            port,
            token,
            output,
        };
        wait::until("GET /health to answer 200", START_TIMEOUT, || {
            server.get("/health").ok().filter(|(s, _)| *s == 200)
        });
        server
    }

    /// The bound loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The control token the server printed.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The server's home.
    pub fn home(&self) -> &FixtureHome {
        &self.home
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Everything the server wrote to stdout and stderr so far.
    pub fn output(&self) -> String {
        self.output.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// `GET path`: the status and the body as JSON (`Value::String` when it is not JSON).
    pub fn get(&self, path: &str) -> std::io::Result<(u16, Value)> {
        self.request("GET", path, None, false)
    }

    /// A request with an optional JSON body, with the control token when `with_token`.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        with_token: bool,
    ) -> std::io::Result<(u16, Value)> {
        let url = format!("{}{}", self.base_url(), path);
        let mut req = ureq::http::Request::builder().method(method).uri(&url);
        if with_token {
            req = req.header("authorization", format!("Bearer {}", self.token));
        }
        let answer = match body {
            Some(b) => {
                let req = req
                    .header("content-type", "application/json")
                    .body(b.to_string())
                    .map_err(std::io::Error::other)?;
                self.agent.run(req)
            }
            None => {
                let req = req.body(()).map_err(std::io::Error::other)?;
                self.agent.run(req)
            }
        };
        let mut resp = answer.map_err(std::io::Error::other)?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .read_to_string()
            .map_err(std::io::Error::other)?;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok((status, value))
    }

    /// Connects as an app to `/ingest`, says `hello`, sends `frames` and closes, then waits
    /// until run `run` has stored `frames.len()` events.
    ///
    /// # Panics
    /// When the connection fails or the events are not stored in time.
    pub fn ingest(&self, run: &str, frames: &[String]) {
        let url = format!("ws://127.0.0.1:{}/ingest", self.port);
        let (mut ws, _) =
            tungstenite::connect(url.as_str()).unwrap_or_else(|e| panic!("connect {url}: {e}"));
        let send = |ws: &mut tungstenite::WebSocket<_>, text: &str| {
            ws.send(tungstenite::Message::text(text))
                .unwrap_or_else(|e| panic!("send to {url}: {e}"));
        };
        send(&mut ws, &frames::hello(None));
        // The hello.ack comes first; the frames follow it.
        let _ack = ws.read().unwrap_or_else(|e| panic!("hello.ack: {e}"));
        for f in frames {
            send(&mut ws, f);
        }
        let _ = ws.close(None);
        let _ = ws.flush();
        let want = frames.len() as u64;
        wait::until(
            &format!("run {run} to store {want} events"),
            START_TIMEOUT,
            || {
                let (status, v) = self.get(&format!("/api/runs/{run}")).ok()?;
                (status == 200 && v["counts"]["events"].as_u64() == Some(want)).then_some(())
            },
        );
    }

    /// Stops the server with SIGTERM, as Ctrl-C or a service manager does, and returns its
    /// exit status (it is killed if it has not exited after [`STOP_TIMEOUT`]).
    ///
    /// # Panics
    /// When the process cannot be signalled or waited for.
    pub fn stop(mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait::until("mindgate serve to exit", STOP_TIMEOUT, || {
                self.child.try_wait().ok().flatten()
            })
        }));
        match waited {
            Ok(status) => status,
            Err(_) => {
                let _ = self.child.kill();
                self.child
                    .wait()
                    .unwrap_or_else(|e| panic!("cannot wait for mindgate serve: {e}"))
            }
        }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn push(output: &Mutex<String>, text: &str) {
    if let Ok(mut out) = output.lock() {
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
}

/// `http://127.0.0.1:<port>/#token=<token>` → (port, token).
fn parse_viewer_url(url: &str) -> Option<(u16, String)> {
    let rest = url.strip_prefix("http://")?;
    let (authority, fragment) = rest.split_once("/#token=")?;
    let port = authority.rsplit_once(':')?.1.parse().ok()?;
    Some((port, fragment.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_viewer_url_gives_port_and_token() {
        assert_eq!(
            parse_viewer_url("http://127.0.0.1:4811/#token=ab12"),
            Some((4811, "ab12".to_owned()))
        );
        assert_eq!(parse_viewer_url("http://127.0.0.1/#token=x"), None);
        assert_eq!(parse_viewer_url("ws://127.0.0.1:1/"), None);
    }
}
