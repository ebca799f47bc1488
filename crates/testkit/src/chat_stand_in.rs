//! A stand-in for an OpenAI-compatible `/v1/chat/completions` endpoint on 127.0.0.1: it
//! answers each request with the next of a fixed list of completions (the last one
//! repeats) and records every request (headers and body) for the test to check.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

/// One request the stand-in received.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// Request line, e.g. `POST /v1/chat/completions HTTP/1.1`.
    pub request_line: String,
    /// Headers as (lower-case name, value).
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: serde_json::Value,
}

impl ChatRequest {
    /// A header's value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The text of every prompt message, joined.
    pub fn prompt(&self) -> String {
        self.body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter_map(|m| m["content"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }
}

/// How the stand-in answers.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A 200 chat completion whose first choice's content is this text.
    Completion(String),
    /// Any status and raw body.
    Raw(u16, String),
}

/// The stand-in server; it stops when dropped (the listening thread is left to the
/// process, blocked in `accept`).
pub struct ChatStandIn {
    url: String,
    requests: Arc<Mutex<Vec<ChatRequest>>>,
}

impl ChatStandIn {
    /// Starts it; requests get `answers` in order, the last one repeating.
    pub fn start(answers: Vec<Answer>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}/v1", listener.local_addr()?);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        thread::spawn(move || {
            let mut next = 0usize;
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let answer = answers
                    .get(next)
                    .or(answers.last())
                    .cloned()
                    .unwrap_or(Answer::Raw(500, "no answer".to_owned()));
                next += 1;
                serve_one(stream, &answer, &seen);
            }
        });
        Ok(Self { url, requests })
    }

    /// Base URL to configure (`http://127.0.0.1:PORT/v1`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The body of a chat completion answering `content`.
pub fn completion_body(content: &str) -> String {
    serde_json::json!({
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "model": "stand-in",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "finish_reason": "stop"
        }]
    })
    .to_string()
}

/// Reads one request, records it (before answering, so a test that got the answer sees
/// the request), then answers.
fn serve_one(stream: TcpStream, answer: &Answer, seen: &Mutex<Vec<ChatRequest>>) -> Option<()> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length.min(16 * 1024 * 1024)];
    reader.read_exact(&mut body).ok()?;
    seen.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(ChatRequest {
            request_line: request_line.trim_end().to_owned(),
            headers,
            body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        });
    let (status, text) = match answer {
        Answer::Completion(content) => (200, completion_body(content)),
        Answer::Raw(status, body) => (*status, body.clone()),
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.flush();
    Some(())
}
