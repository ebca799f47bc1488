//! The last line of defence: a handler that panics answers `500` with a JSON
//! error and a log line, instead of dropping the connection silently.

use std::any::Any;

use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;

use crate::error::ApiError;

/// The panic handler's type (a plain function, so the layer is `Clone`).
pub type PanicHandler = fn(Box<dyn Any + Send + 'static>) -> Response;

/// The layer every route is wrapped in (outermost, so it also covers the guard).
pub fn layer() -> CatchPanicLayer<PanicHandler> {
    CatchPanicLayer::custom(answer_panic as PanicHandler)
}

/// Logs the panic and answers `500 {"error": "internal error: …"}`.
fn answer_panic(payload: Box<dyn Any + Send + 'static>) -> Response {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    tracing::error!(panic = %message, "a request handler panicked; answered 500");
    ApiError::internal(format!("internal error: {message}")).into_response()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]

    use axum::Router;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use tower::ServiceExt;

    async fn boom() -> &'static str {
        panic!("boom at the handler")
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_500_with_a_json_error() {
        let app = Router::new()
            .route("/boom", get(boom))
            .layer(super::layer());
        let response = app
            .oneshot(Request::get("/boom").body(Body::empty()).expect("request"))
            .await
            .expect("the service answers");
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("body");
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(v["error"], "internal error: boom at the handler");
    }
}
