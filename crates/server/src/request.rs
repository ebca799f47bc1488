//! Axum's extractor rejections as [`ApiError`]s: one rule for every JSON route.

use axum::Json;
use axum::extract::Query;
use axum::extract::rejection::{JsonRejection, QueryRejection};
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
