//! `POST /v1/traces`: OTLP/HTTP trace export (protobuf or JSON, gzip or zstd), on the main
//! port and on the OTLP port (`--otlp-port`, default 4318, the exporters' default).
//!
//! The body is decompressed by `tower-http` and limited *after* decompression
//! ([`MAX_OTLP_BODY_BYTES`]: a gzip bomb gets 413 having cost at most that much). The
//! spans become events through `mindgate-otlp` (decoding, the mapping, the live rules) and
//! go to the same writer as `/ingest`, so live viewers see the graph grow. A body that
//! does not decode gets 400 and changes nothing; spans that cannot be stored are counted
//! in the OTLP partial-success answer. Loopback exporters need no token (the Host/Origin
//! guard still applies); with remote access on, the token is required as everywhere.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::error_handling::HandleErrorLayer;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{BoxError, Router};
use mindgate_errors::ErrorCode;
use mindgate_otlp::{
    Decoded, ExportTracePartialSuccess, ExportTraceServiceResponse, ProstMessage, StoredTrace,
    Tracker, TrackerConfig,
};
use mindgate_store::{NewEvent, TryAppendError};
use tower_http::decompression::RequestDecompressionLayer;

use crate::error::ApiError;
use crate::state::{AppState, Stats};

/// Most bytes of a trace export body once decompressed.
pub const MAX_OTLP_BODY_BYTES: usize = 16 * 1024 * 1024;

/// How often runs are checked for the quiet timeout.
const EXPIRE_EVERY: Duration = Duration::from_millis(500);

/// The trace tracker a server shares between its OTLP requests.
#[derive(Debug)]
pub struct OtlpIngest {
    tracker: Mutex<Tracker>,
}

impl OtlpIngest {
    /// A tracker with `config`.
    pub fn new(config: TrackerConfig) -> OtlpIngest {
        OtlpIngest {
            tracker: Mutex::new(Tracker::new(config)),
        }
    }
}

/// The `/v1/traces` route with its decompression and body limit (merged into the main
/// router, and served alone on the OTLP port).
pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/v1/traces",
        post(export)
            .layer(DefaultBodyLimit::max(MAX_OTLP_BODY_BYTES))
            .layer(
                tower::ServiceBuilder::new()
                    .layer(HandleErrorLayer::new(decompression_failed))
                    .layer(
                        RequestDecompressionLayer::new()
                            .gzip(true)
                            .zstd(true)
                            .no_br()
                            .no_deflate(),
                    ),
            ),
    )
}

async fn decompression_failed(error: BoxError) -> Response {
    ApiError::new(
        ErrorCode::BadRequest,
        format!("the body could not be decompressed: {error}"),
    )
    .into_response()
}

/// The router of the OTLP port: `/v1/traces` only, behind a Host/Origin guard for that port.
pub fn port_router(state: AppState, port: u16) -> Router {
    routes()
        .fallback(|| async {
            ApiError::new(
                ErrorCode::NotFound,
                "this is the OTLP port: POST /v1/traces (the viewer is on the main port)",
            )
        })
        .layer(middleware::from_fn_with_state(
            (state.clone(), port),
            port_guard,
        ))
        .layer(crate::panic_guard::layer())
        .with_state(state)
}

async fn port_guard(
    State((state, port)): State<(AppState, u16)>,
    req: Request,
    next: Next,
) -> Response {
    let remote = state
        .config
        .allow_remote
        .then_some(state.config.allowed_hosts.as_slice());
    if let Err(message) = crate::guard::check_host_origin(req.headers(), port, remote) {
        tracing::warn!(%message, "OTLP request refused by the host/origin guard");
        return ApiError::new(ErrorCode::ForbiddenHost, message).into_response();
    }
    if remote.is_some()
        && !crate::guard::bearer(req.headers())
            .is_some_and(|t| crate::guard::token_matches(t, &state.token))
    {
        return ApiError::new(
            ErrorCode::Unauthorized,
            "remote access is on (--allow-remote): OTLP exporters need the viewer token \
             (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>)",
        )
        .into_response();
    }
    next.run(req).await
}

#[derive(Clone, Copy, PartialEq)]
enum Encoding {
    Protobuf,
    Json,
}

fn encoding_of(headers: &HeaderMap) -> Option<Encoding> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/x-protobuf");
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "application/x-protobuf" | "application/protobuf" | "application/octet-stream" => {
            Some(Encoding::Protobuf)
        }
        "application/json" => Some(Encoding::Json),
        _ => None,
    }
}

async fn export(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(encoding) = encoding_of(&headers) else {
        return ApiError::new(
            ErrorCode::BadRequest,
            "Content-Type must be application/x-protobuf or application/json (OTLP/HTTP)",
        )
        .into_response();
    };
    let body = match body {
        Ok(b) => b,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return ApiError::new(
                ErrorCode::TooLarge,
                format!(
                    "the trace export is over {MAX_OTLP_BODY_BYTES} bytes once decompressed; \
                     send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)"
                ),
            )
            .into_response();
        }
        Err(rejection) => {
            return ApiError::new(
                ErrorCode::BadRequest,
                format!("the body could not be read or decompressed: {rejection}"),
            )
            .into_response();
        }
    };
    let decoded = tokio::task::spawn_blocking(move || match encoding {
        Encoding::Protobuf => mindgate_otlp::decode_protobuf(&body),
        Encoding::Json => mindgate_otlp::decode_json(&body),
    })
    .await;
    let decoded = match decoded {
        Ok(Ok(d)) => d,
        Ok(Err(e)) => {
            Stats::bump(&state.stats.invalid_frames);
            return ApiError::new(ErrorCode::BadRequest, mindgate_errors::error_chain(&e))
                .into_response();
        }
        Err(_) => {
            return ApiError::new(ErrorCode::Internal, "decoding the export failed")
                .into_response();
        }
    };
    let (rejected, message) = match ingest(&state, decoded).await {
        Ok(counts) => counts,
        Err(response) => return response,
    };
    respond(encoding, rejected, message)
}

/// Maps and stores a decoded export; returns the partial-success counts.
async fn ingest(state: &AppState, decoded: Decoded) -> Result<(i64, String), Response> {
    let otlp = Arc::clone(&state.otlp);
    let store = Arc::clone(&state.store);
    let mapped = tokio::task::spawn_blocking(move || {
        let mut last_seq = |run: &str| stored_trace(&store, run);
        let mut tracker = otlp.tracker.lock().unwrap_or_else(|p| p.into_inner());
        tracker
            .ingest(&decoded.request, mindgate_store::now_ms(), &mut last_seq)
            .with_decoded(&decoded)
    })
    .await
    .map_err(|_| ApiError::new(ErrorCode::Internal, "mapping the spans failed").into_response())?;
    let (batch, rejected, message) = mapped;
    let wrote = !batch.events.is_empty();
    append_all(state, batch.events)
        .await
        .map_err(IntoResponse::into_response)?;
    // Answer once the spans are committed: an exporter's success means stored.
    if wrote {
        let writer = state.writer.clone();
        match tokio::task::spawn_blocking(move || writer.flush()).await {
            Ok(Ok(())) => {}
            _ => {
                return Err(
                    ApiError::new(ErrorCode::Unavailable, "the store has stopped").into_response(),
                );
            }
        }
    }
    Ok((rejected, message))
}

/// What the store holds of a trace's run (read once per run the tracker does not know).
fn stored_trace(store: &mindgate_store::RunStore, run: &str) -> Option<StoredTrace> {
    let events = store.all_events(run).ok().flatten()?;
    Some(StoredTrace::from_events(
        events
            .iter()
            .map(|e| (e.seq, e.type_name.as_str(), e.payload_value())),
    ))
}

/// Queues events for the writer, waiting (without blocking the runtime) while it is full.
async fn append_all(state: &AppState, events: Vec<NewEvent>) -> Result<(), ApiError> {
    for mut event in events {
        loop {
            match state.writer.try_append(event) {
                Ok(()) => {
                    Stats::bump(&state.stats.accepted_events);
                    break;
                }
                Err(TryAppendError::Full(back)) => {
                    event = *back;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                Err(TryAppendError::Gone) => {
                    return Err(ApiError::new(
                        ErrorCode::Unavailable,
                        "the store has stopped",
                    ));
                }
            }
        }
    }
    Ok(())
}

trait WithDecoded {
    fn with_decoded(self, decoded: &Decoded) -> (mindgate_otlp::Batch, i64, String);
}

impl WithDecoded for mindgate_otlp::Batch {
    /// The batch with the decoder's rejections added to its own.
    fn with_decoded(self, decoded: &Decoded) -> (mindgate_otlp::Batch, i64, String) {
        let rejected = decoded.rejected_spans + self.rejected_spans;
        let mut reasons = decoded.reasons.clone();
        reasons.extend(self.reasons.iter().cloned());
        reasons.truncate(3);
        let message = if rejected == 0 {
            String::new()
        } else {
            format!("{rejected} span(s) rejected: {}", reasons.join("; "))
        };
        (self, i64::try_from(rejected).unwrap_or(i64::MAX), message)
    }
}

fn respond(encoding: Encoding, rejected: i64, message: String) -> Response {
    let partial = (rejected > 0 || !message.is_empty()).then_some(ExportTracePartialSuccess {
        rejected_spans: rejected,
        error_message: message,
    });
    let response = ExportTraceServiceResponse {
        partial_success: partial,
    };
    match encoding {
        Encoding::Protobuf => (
            [(header::CONTENT_TYPE, "application/x-protobuf")],
            response.encode_to_vec(),
        )
            .into_response(),
        Encoding::Json => (
            [(header::CONTENT_TYPE, "application/json")],
            serde_json::to_string(&response).unwrap_or_else(|_| "{}".to_owned()),
        )
            .into_response(),
    }
}

/// Finishes quiet runs (no span for the quiet timeout, root not ended) until shutdown.
pub fn spawn_expirer(state: &AppState) {
    let state = state.clone();
    state.tasks.clone().spawn(async move {
        let mut every = tokio::time::interval(EXPIRE_EVERY);
        loop {
            tokio::select! {
                _ = state.shutdown.cancelled() => return,
                _ = every.tick() => {}
            }
            let events = {
                let mut tracker = state.otlp.tracker.lock().unwrap_or_else(|p| p.into_inner());
                if tracker.trace_count() == 0 {
                    continue;
                }
                tracker.expire(mindgate_store::now_ms())
            };
            if !events.is_empty() {
                tracing::info!(runs = events.len(), "quiet OTLP runs finished");
                if append_all(&state, events).await.is_err() {
                    return;
                }
            }
        }
    });
}
