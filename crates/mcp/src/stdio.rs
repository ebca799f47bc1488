//! The stdio transport: newline-delimited JSON-RPC that answers bad input.
//!
//! rmcp's own stdio transport drops a line that is not JSON without a word
//! (to avoid error storms with peers that echo), so a client that sent one
//! waits for an answer that never comes. This transport replies the way
//! JSON-RPC 2.0 asks and keeps serving:
//!
//! | incoming line | reply |
//! | --- | --- |
//! | not JSON (or not UTF-8) | `-32700` parse error, `id: null` |
//! | longer than [`MAX_LINE_BYTES`] (dropped unread) | `-32600` invalid request, `id: null` |
//! | JSON, but a request of the wrong shape | `-32600` invalid request, with the request's `id` when it has a usable one |
//! | JSON, but a notification or response of the wrong shape | nothing (JSON-RPC never answers those) |
//!
//! No reply is ever sent to a response, so a peer that echoes what it gets
//! cannot start a storm: the echo of an error reply is a response. Blank
//! lines, `\r\n` endings and a leading UTF-8 BOM are accepted as before.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// Longest incoming line (one JSON-RPC message) read, in bytes (16 MiB, as rmcp).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC "Parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "Invalid Request".
pub const INVALID_REQUEST: i64 = -32600;

/// Newline-delimited JSON-RPC over a reader and a writer (standard input and
/// output for `mindgate mcp`), replying to input it cannot use (see the
/// [module docs](self)).
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Inside a line already found too long, until its newline.
    discarding: bool,
    max_line: usize,
    write: Arc<Mutex<Option<W>>>,
}

impl<R, W> std::fmt::Debug for LineTransport<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineTransport")
            .field("max_line", &self.max_line)
            .finish_non_exhaustive()
    }
}

/// The transport over this process's standard input and output.
pub fn stdio() -> LineTransport<tokio::io::Stdin, tokio::io::Stdout> {
    LineTransport::new(tokio::io::stdin(), tokio::io::stdout())
}

enum LineRead {
    Line,
    Oversized,
    Eof,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading messages from `read` and writing to `write`.
    pub fn new(read: R, write: W) -> Self {
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line: MAX_LINE_BYTES,
            write: Arc::new(Mutex::new(Some(write))),
        }
    }

    /// The same with another longest-line limit.
    pub fn with_max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes;
        self
    }

    /// Reads one line into `self.line` without letting it grow past the
    /// limit. Cancel-safe: bytes are moved from the reader's buffer into
    /// `self.line` with no await in between, so a cancelled read resumes.
    async fn read_line(&mut self) -> std::io::Result<LineRead> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(LineRead::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let outcome = if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
                None
            } else if self.line.len().saturating_add(take) > self.max_line {
                self.line.clear();
                self.discarding = newline.is_none();
                Some(LineRead::Oversized)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| LineRead::Line)
            };
            self.read.consume(take);
            if let Some(o) = outcome {
                return Ok(o);
            }
        }
    }

    /// Sends a reply built here, in the background (so `receive` stays
    /// cancel-safe).
    fn reply(&self, message: Value) {
        let write = self.write.clone();
        tokio::spawn(async move {
            if let Err(e) = write_line(&write, &message).await {
                tracing::debug!(error = %e, "could not send an error reply");
            }
        });
    }
}

async fn write_line<W: AsyncWrite + Unpin, T: serde::Serialize>(
    write: &Mutex<Option<W>>,
    message: &T,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    let mut guard = write.lock().await;
    let w = guard.as_mut().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotConnected, "transport is closed")
    })?;
    w.write_all(&bytes).await?;
    w.flush().await
}

/// A JSON-RPC error response.
fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// What to answer a JSON value that is not a message rmcp understands
/// (`None`: nothing).
fn answer_to_unusable(v: &Value) -> Option<Value> {
    let Some(obj) = v.as_object() else {
        return Some(error_reply(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a JSON-RPC message is a JSON object",
        ));
    };
    let id = obj.get("id");
    if obj.contains_key("method") {
        // A notification is never answered; a request is, by its id.
        let id = id?;
        let id = match id {
            Value::String(_) | Value::Number(_) => id.clone(),
            _ => Value::Null,
        };
        return Some(error_reply(
            id,
            INVALID_REQUEST,
            "Invalid Request: not a valid JSON-RPC 2.0 request",
        ));
    }
    if obj.contains_key("result") || obj.contains_key("error") {
        // A response: never answered (this is what keeps an echoing peer from a storm).
        return None;
    }
    Some(error_reply(
        Value::Null,
        INVALID_REQUEST,
        "Invalid Request: not a JSON-RPC 2.0 message",
    ))
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "mindgate-stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move { write_line(&write, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::Oversized) => {
                    tracing::warn!(max = self.max_line, "incoming message too long, dropped");
                    self.reply(error_reply(
                        Value::Null,
                        INVALID_REQUEST,
                        &format!(
                            "Invalid Request: message longer than {} bytes",
                            self.max_line
                        ),
                    ));
                    continue;
                }
                Ok(LineRead::Eof) => return None,
                Err(e) => {
                    tracing::error!(error = %e, "reading standard input failed");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
            if body.iter().all(u8::is_ascii_whitespace) {
                self.line = line;
                self.line.clear();
                continue;
            }
            let parsed = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(body);
            let answer = match parsed {
                Ok(msg) => return Some(msg),
                Err(e) if e.is_syntax() || e.is_eof() => {
                    tracing::debug!(error = %e, "unparsable incoming line");
                    Some(error_reply(
                        Value::Null,
                        PARSE_ERROR,
                        &format!("Parse error: {e}"),
                    ))
                }
                Err(e) => {
                    tracing::debug!(error = %e, "incoming JSON is not a usable message");
                    match serde_json::from_slice::<Value>(body) {
                        Ok(v) => answer_to_unusable(&v),
                        Err(_) => Some(error_reply(Value::Null, PARSE_ERROR, "Parse error")),
                    }
                }
            };
            // Keep the buffer's capacity for the next line.
            self.line = line;
            self.line.clear();
            if let Some(a) = answer {
                self.reply(a);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut guard = self.write.lock().await;
        if let Some(mut w) = guard.take() {
            w.shutdown().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unusable_json_is_answered_only_when_it_is_a_request() {
        let r = answer_to_unusable(&json!({"jsonrpc": "2.0", "id": 7, "method": 3}));
        assert_eq!(
            r.map(|v| (v["id"].clone(), v["error"]["code"].clone())),
            Some((json!(7), json!(INVALID_REQUEST)))
        );
        assert_eq!(
            answer_to_unusable(&json!({"jsonrpc": "2.0", "method": 3})),
            None
        );
        assert_eq!(
            answer_to_unusable(&json!({"jsonrpc": "2.0", "id": null, "error": {}})),
            None
        );
        assert_eq!(
            answer_to_unusable(&json!([1, 2])).map(|v| v["id"].clone()),
            Some(Value::Null)
        );
        assert_eq!(
            answer_to_unusable(&json!({"id": [1], "method": "x"})).map(|v| v["id"].clone()),
            Some(Value::Null)
        );
    }
}
