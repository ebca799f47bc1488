//! The OpenAI-compatible embedder against a stand-in `/v1/embeddings` server on
//! 127.0.0.1: batching, order, normalisation, the learned dimension, and every way an
//! answer can be wrong.
#![cfg(feature = "openai")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mindgate_embed::{EmbedError, Embedder, OpenAiConfig, OpenAiEmbedder};
use serde_json::{Value, json};

/// One request the stand-in received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    authorization: Option<String>,
    body: Value,
}

enum Answer {
    Json(u16, String),
    /// Read the request, then never answer (until the client gives up).
    Hang,
}

struct StandIn {
    base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

/// At most this many connections per stand-in: the accept loop is bounded.
const MAX_CONNECTIONS: usize = 32;

fn stand_in(answer: impl Fn(&Received) -> Answer + Send + 'static) -> StandIn {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&received);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().take(MAX_CONNECTIONS) {
            let Ok(stream) = stream else { continue };
            let Some(request) = read_request(&stream) else {
                continue;
            };
            log.lock().unwrap().push(request.clone());
            match answer(&request) {
                Answer::Json(status, body) => respond(stream, status, &body),
                Answer::Hang => held.push(stream),
            }
        }
    });
    StandIn { base_url, received }
}

fn read_request(stream: &TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        path,
        authorization,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn respond(mut stream: TcpStream, status: u16, body: &str) {
    let head = format!(
        "HTTP/1.1 {status} Stand-in\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

fn inputs(request: &Received) -> Vec<String> {
    request.body["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// An OpenAI-shaped answer: the vector of a text is `[len, 1, 2]` (not normalised),
/// listed in reverse order with explicit indices.
fn fake_embeddings(request: &Received) -> Answer {
    let data: Vec<Value> = inputs(request)
        .iter()
        .enumerate()
        .rev()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": [text.len() as f32, 1.0, 2.0]}))
        .collect();
    Answer::Json(
        200,
        json!({"object": "list", "data": data, "model": request.body["model"]}).to_string(),
    )
}

fn config(stand_in: &StandIn) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(&stand_in.base_url, "test-model");
    config.endpoint.timeout = Some(Duration::from_secs(5));
    config
}

fn remote_error(result: Result<impl std::fmt::Debug, EmbedError>) -> String {
    match result {
        Err(EmbedError::Remote(message)) => message,
        other => panic!("expected a remote error, got {other:?}"),
    }
}

#[test]
fn learns_the_dimension_batches_orders_and_normalises() {
    let server = stand_in(fake_embeddings);
    let mut config = config(&server);
    config.endpoint.api_key = Some("sk-test".to_owned());
    config.batch = 2;
    let embedder = OpenAiEmbedder::connect(config).unwrap();
    assert_eq!(embedder.id().to_string(), "openai:test-model@3");
    assert_eq!(
        server.received.lock().unwrap().len(),
        1,
        "one probe request"
    );

    let texts = ["alpha", "", "be", "gamma!", "  ", "delta"];
    let vectors = embedder.embed(&texts).unwrap();
    for (text, vector) in texts.iter().zip(&vectors) {
        if text.trim().is_empty() {
            assert_eq!(vector, &vec![0.0; 3], "{text:?}");
            continue;
        }
        let raw = [text.len() as f32, 1.0, 2.0];
        let n = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
        for (got, want) in vector.iter().zip(raw) {
            assert!((got - want / n).abs() < 1e-6, "{text:?}: {vector:?}");
        }
    }
    let received = server.received.lock().unwrap().clone();
    // Probe + 4 non-empty texts in batches of 2.
    assert_eq!(received.len(), 3);
    assert_eq!(inputs(&received[1]), ["alpha", "be"]);
    assert_eq!(inputs(&received[2]), ["gamma!", "delta"]);
    for request in &received {
        assert_eq!(request.path, "/v1/embeddings");
        assert_eq!(request.authorization.as_deref(), Some("Bearer sk-test"));
        assert_eq!(request.body["model"], "test-model");
    }
}

#[test]
fn input_types_tell_queries_from_stored_texts() {
    // Unset: no `input_type` field at all (the OpenAI API refuses unknown fields).
    let server = stand_in(fake_embeddings);
    let embedder = OpenAiEmbedder::connect(config(&server)).unwrap();
    embedder.embed(&["stored"]).unwrap();
    embedder.embed_query("asked").unwrap();
    for request in server.received.lock().unwrap().iter() {
        assert!(
            request.body.get("input_type").is_none(),
            "{:?}",
            request.body
        );
    }

    // `query,passage`: the probe and stored texts as passages, the query as a query.
    let server = stand_in(fake_embeddings);
    let config = config(&server)
        .with_input_type(Some("query,passage"))
        .unwrap();
    let embedder = OpenAiEmbedder::connect(config).unwrap();
    embedder.embed(&["stored one", "stored two"]).unwrap();
    let query = embedder.embed_query("asked").unwrap();
    let raw = ["asked".len() as f32, 1.0, 2.0];
    let n = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((query[0] - raw[0] / n).abs() < 1e-6, "{query:?}");
    let received = server.received.lock().unwrap().clone();
    let seen: Vec<(Vec<String>, &Value)> = received
        .iter()
        .map(|r| (inputs(r), &r.body["input_type"]))
        .collect();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0].1, "passage", "the probe");
    assert_eq!(
        seen[1],
        (
            vec!["stored one".into(), "stored two".into()],
            &json!("passage")
        )
    );
    assert_eq!(seen[2], (vec!["asked".into()], &json!("query")));
}

#[test]
fn a_configured_dimension_needs_no_probe_and_is_enforced() {
    let server = stand_in(fake_embeddings);
    let mut config = config(&server);
    config.dimension = Some(4);
    let embedder = OpenAiEmbedder::connect(config).unwrap();
    assert_eq!(embedder.id().to_string(), "openai:test-model@4");
    assert!(server.received.lock().unwrap().is_empty());
    let message = remote_error(embedder.embed(&["hello"]));
    assert!(message.contains("3-dimensional"), "{message}");
    assert!(server.received.lock().unwrap()[0].authorization.is_none());
}

#[test]
fn error_answers_carry_the_status_and_message() {
    let server = stand_in(|request| {
        if inputs(request).first().map(String::as_str) == Some("key") {
            Answer::Json(
                401,
                json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
                    .to_string(),
            )
        } else {
            Answer::Json(503, "upstream overloaded, try later".to_owned())
        }
    });
    let mut config = config(&server);
    config.dimension = Some(3);
    let embedder = OpenAiEmbedder::connect(config).unwrap();
    let message = remote_error(embedder.embed(&["key"]));
    assert!(message.contains("HTTP 401"), "{message}");
    assert!(message.contains("Incorrect API key provided"), "{message}");
    let message = remote_error(embedder.embed(&["other"]));
    assert!(message.contains("HTTP 503"), "{message}");
    assert!(message.contains("upstream overloaded"), "{message}");
    // The probe fails the same way when the dimension must be learned.
    let message = remote_error(OpenAiEmbedder::connect(self::config(&server)));
    assert!(message.contains("HTTP 503"), "{message}");
}

#[test]
fn malformed_bodies_are_refused_clearly() {
    let server = stand_in(|request| {
        let body = match inputs(request).first().map(String::as_str) {
            Some("not-json") => "{\"data\": [".to_owned(),
            Some("no-data") => json!({"object": "list"}).to_string(),
            Some("strings") => {
                json!({"data": [{"index": 0, "embedding": ["a", "b", "c"]}]}).to_string()
            }
            Some("too-few") => {
                json!({"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0]}]}).to_string()
            }
            Some("repeated") => json!({"data": [
                {"index": 0, "embedding": [1.0, 0.0, 0.0]},
                {"index": 0, "embedding": [0.0, 1.0, 0.0]}
            ]})
            .to_string(),
            Some("out-of-range") => json!({"data": [
                {"index": 0, "embedding": [1.0, 0.0, 0.0]},
                {"index": 7, "embedding": [0.0, 1.0, 0.0]}
            ]})
            .to_string(),
            _ => String::new(),
        };
        Answer::Json(200, body)
    });
    let mut config = config(&server);
    config.dimension = Some(3);
    let embedder = OpenAiEmbedder::connect(config).unwrap();
    for (texts, expected) in [
        (&["not-json"][..], "not an embeddings answer"),
        (&["no-data"][..], "not an embeddings answer"),
        (&["strings"][..], "not an embeddings answer"),
        (&["empty"][..], "(empty body)"),
        (&["too-few", "x"][..], "answered 1 embeddings for 2 texts"),
        (&["repeated", "x"][..], "index 0"),
        (&["out-of-range", "x"][..], "index 7"),
    ] {
        let message = remote_error(embedder.embed(texts));
        assert!(message.contains(expected), "{texts:?}: {message}");
    }
}

#[test]
fn a_silent_endpoint_times_out() {
    let server = stand_in(|_| Answer::Hang);
    let mut config = config(&server);
    config.dimension = Some(3);
    config.endpoint.timeout = Some(Duration::from_millis(300));
    let embedder = OpenAiEmbedder::connect(config).unwrap();
    let started = std::time::Instant::now();
    let message = remote_error(embedder.embed(&["hello"]));
    assert!(message.contains("did not answer within"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn an_unreachable_endpoint_and_a_bad_url_are_clear_errors() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut config = OpenAiConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
    config.endpoint.timeout = Some(Duration::from_secs(5));
    let message = remote_error(OpenAiEmbedder::connect(config));
    assert!(
        message.contains("request to http://127.0.0.1:"),
        "{message}"
    );

    let err = OpenAiEmbedder::connect(OpenAiConfig::new("127.0.0.1:11434/v1", "m")).unwrap_err();
    assert!(matches!(err, EmbedError::Model(_)), "{err:?}");
    assert!(err.to_string().contains("http://"), "{err}");
}
