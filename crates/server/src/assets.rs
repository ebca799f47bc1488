//! The embedded browser viewer (`ui/dist`), served at `/` with SPA fallback.

use axum::body::Body;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

use crate::error::ApiError;

#[derive(RustEmbed)]
#[folder = "../../ui/dist/"]
struct Dist;

/// Every embedded asset path (for tests and diagnostics).
pub fn asset_paths() -> Vec<String> {
    Dist::iter().map(|p| p.into_owned()).collect()
}

/// The bytes of one embedded asset (`index.html`, `js/main.js`, …).
pub fn asset(path: &str) -> Option<Vec<u8>> {
    Dist::get(path).map(|f| f.data.into_owned())
}

/// Whether `path` (a request path) is the viewer page or one of its embedded
/// files — the only things served without the token when remote access is on.
pub fn is_static_file(path: &str) -> bool {
    let path = path.trim_start_matches('/');
    path.is_empty() || Dist::get(path).is_some()
}

fn serve_file(path: &str) -> Option<Response> {
    let file = Dist::get(path)?;
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    let cache = if path == "index.html" {
        "no-cache"
    } else {
        "public, max-age=300"
    };
    Some(
        Response::builder()
            .header(header::CONTENT_TYPE, mime.as_ref())
            .header(header::CACHE_CONTROL, cache)
            .header("x-content-type-options", "nosniff")
            .body(Body::from(file.data.into_owned()))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()),
    )
}

/// Fallback handler: an asset if one matches, `index.html` for other non-API
/// paths (client-side routes), JSON 404 under `/api/`.
pub async fn fallback(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if path.starts_with("api/") || path == "api" {
        return ApiError::not_found(format!("no API route {}", uri.path())).into_response();
    }
    let path = if path.is_empty() { "index.html" } else { path };
    if let Some(resp) = serve_file(path) {
        return resp;
    }
    serve_file("index.html").unwrap_or_else(|| {
        ApiError::not_found("the viewer UI is not built into this binary").into_response()
    })
}
