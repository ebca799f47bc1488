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

use std::sync::Arc;
use std::sync::atomic::Ordering;
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
use mindgate_otlp::budget::MAX_REQUEST_TRACES;
use mindgate_otlp::{
    Batch, Export, ExportTracePartialSuccess, ExportTraceServiceResponse, ProstMessage,
};
use tower_http::decompression::RequestDecompressionLayer;

use crate::error::ApiError;

use crate::otlp_traces::{Slot, Storage, Work};
use crate::state::AppState;
use crate::state::Stats;

/// Most bytes of a trace export body once decompressed.
pub const MAX_OTLP_BODY_BYTES: usize = 16 * 1024 * 1024;

/// How often runs are checked for the quiet timeout.
const EXPIRE_EVERY: Duration = Duration::from_millis(500);

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
    // Protobuf is read in place: the body is kept and each span decoded only when its
    // events are built (memory: the body plus a few tens of bytes a span).
    let decoded = tokio::task::spawn_blocking(move || match encoding {
        Encoding::Protobuf => mindgate_otlp::read_protobuf(body),
        Encoding::Json => mindgate_otlp::decode_json(&body).and_then(|d| d.into_export()),
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

/// Maps and stores a read export; returns the partial-success counts. The request
/// holds the slots of its own traces only (in trace-id order), never one lock of every
/// client; the mapping and the writes run off the async runtime.
async fn ingest(state: &AppState, export: Export) -> Result<(i64, String), Response> {
    let failed = |what: &str| ApiError::new(ErrorCode::Internal, what.to_owned()).into_response();
    let Export {
        traces: mut groups,
        rejected_spans,
        reasons,
    } = export;
    let past_budget: usize = groups
        .split_off(groups.len().min(MAX_REQUEST_TRACES))
        .iter()
        .map(mindgate_otlp::TraceSpans::len)
        .sum();
    let mut held = Vec::with_capacity(groups.len());
    for group in groups {
        let slot: Slot = state.otlp.slot(group.trace());
        held.push((slot.lock_owned().await, group));
    }
    let (store, writer, otlp) = (
        Arc::clone(&state.store),
        state.writer.clone(),
        Arc::clone(&state.otlp),
    );
    let written = tokio::task::spawn_blocking(move || {
        let storage = Storage {
            store: &store,
            writer: &writer,
            config: otlp.config(),
        };
        let mut batch = Batch::default();
        if past_budget > 0 {
            batch.reject(
                past_budget as u64,
                format!(
                    "the request holds more than {MAX_REQUEST_TRACES} traces, over the decode \
                     budget: the spans of the traces past it (by trace id) are not stored; \
                     send smaller batches"
                ),
            );
        }
        let (mut guards, groups): (Vec<_>, Vec<_>) = held.into_iter().unzip();
        let traces = guards
            .iter_mut()
            .zip(groups)
            .map(|(guard, group)| {
                let trace = group.trace();
                (&mut **guard, trace, Work::Spans(group))
            })
            .collect();
        let result = storage.write(traces, mindgate_store::now_ms(), &mut batch);
        result.map(|()| batch)
    })
    .await
    .map_err(|_| failed("mapping the spans failed"))?;
    let batch = written
        .map_err(|e| ApiError::new(e.code(), mindgate_errors::error_chain(&e)).into_response())?;
    state
        .stats
        .accepted_events
        .fetch_add(batch.event_spans.len() as u64, Ordering::Relaxed);
    Ok(answer(rejected_spans, reasons, &batch))
}

/// The partial-success count and message: the decoder's rejections and the batch's.
fn answer(decode_rejected: u64, mut reasons: Vec<String>, batch: &Batch) -> (i64, String) {
    let rejected = decode_rejected + batch.rejected_spans;
    reasons.extend(batch.reasons.iter().cloned());
    reasons.truncate(3);
    let message = if rejected == 0 && reasons.is_empty() {
        String::new()
    } else {
        format!("{rejected} span(s) rejected: {}", reasons.join("; "))
    };
    (i64::try_from(rejected).unwrap_or(i64::MAX), message)
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
/// A trace in use by a request is skipped (it is not quiet); each quiet one is finished
/// under its claim like a request's spans, off the async runtime.
pub fn spawn_expirer(state: &AppState) {
    let state = state.clone();
    state.tasks.clone().spawn(async move {
        let mut every = tokio::time::interval(EXPIRE_EVERY);
        loop {
            tokio::select! {
                _ = state.shutdown.cancelled() => return,
                _ = every.tick() => {}
            }
            let mut idle = Vec::new();
            for slot in state.otlp.all() {
                if let Ok(guard) = slot.try_lock_owned() {
                    idle.push(guard);
                }
            }
            if idle.is_empty() {
                continue;
            }
            let (store, writer, otlp) = (
                Arc::clone(&state.store),
                state.writer.clone(),
                Arc::clone(&state.otlp),
            );
            let finished = tokio::task::spawn_blocking(move || {
                let storage = Storage {
                    store: &store,
                    writer: &writer,
                    config: otlp.config(),
                };
                let mut batch = Batch::default();
                let traces = idle
                    .iter_mut()
                    .filter_map(|guard| {
                        let trace = guard.as_ref()?.trace();
                        Some((&mut **guard, trace, Work::Expire))
                    })
                    .collect();
                storage
                    .write(traces, mindgate_store::now_ms(), &mut batch)
                    .map(|()| batch.event_spans.len())
            })
            .await;
            match finished {
                Ok(Ok(0)) => {}
                Ok(Ok(runs)) => tracing::info!(runs, "quiet OTLP runs finished"),
                Ok(Err(e)) => tracing::warn!(error = %mindgate_errors::error_chain(&e), "finishing quiet OTLP runs failed"),
                Err(_) => tracing::warn!("finishing quiet OTLP runs failed"),
            }
        }
    });
}
