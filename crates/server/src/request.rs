//! Axum's extractor rejections as [`ApiError`]s: one rule for every JSON route.

use axum::Json;
use axum::body::Bytes;
use axum::extract::Query;
use axum::extract::rejection::{BytesRejection, JsonRejection, QueryRejection};
use mindgate_errors::ErrorCode;

use crate::error::ApiError;

/// A parsed query string, or `bad_request` saying what was wrong with it.
pub(crate) fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(v)| v)
        .map_err(|e| ApiError::bad_request(format!("bad query string: {}", e.body_text())))
}

/// A parsed JSON body; a refused one is `too_large` past the body limit, else `bad_request`.
pub(crate) fn body<T>(b: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    b.map(|Json(v)| v).map_err(|e| {
        let code = match ErrorCode::from_http_status(e.status().as_u16()) {
            ErrorCode::TooLarge => ErrorCode::TooLarge,
            _ => ErrorCode::BadRequest,
        };
        ApiError::new(code, format!("bad JSON body: {}", e.body_text()))
    })
}

/// A body of UTF-8 text (`what` names it in the errors): one past the body limit is
/// `too_large`, one that is not UTF-8 a `bad_request` naming the first bad byte — as JSON,
/// like every other refusal, never the framework's plain text.
pub(crate) fn utf8_body(b: Result<Bytes, BytesRejection>, what: &str) -> Result<String, ApiError> {
    let bytes = b.map_err(|e| {
        let code = match ErrorCode::from_http_status(e.status().as_u16()) {
            ErrorCode::TooLarge => ErrorCode::TooLarge,
            _ => ErrorCode::BadRequest,
        };
        ApiError::new(code, format!("cannot read the body: {}", e.body_text()))
    })?;
    String::from_utf8(bytes.into()).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        ApiError::bad_request(format!(
            "the body is not UTF-8 text (byte {at} is not valid UTF-8): {what} must be UTF-8"
        ))
    })
}
