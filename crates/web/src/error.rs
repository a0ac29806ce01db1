//! Errors as the API returns them: a status and `{"error": "<message>"}`, the message
//! being what the CLI prints after `error: ` for the same input. Never a stack trace.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// An error response.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub msg: String,
}

impl ApiError {
    /// Bad input: 400.
    pub fn input(msg: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::BAD_REQUEST, msg: msg.into() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.msg }).to_string();
        (self.status, [(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

/// Unknown paths.
pub async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError { status: StatusCode::NOT_FOUND, msg: format!("{}: no such page or API", uri.path()) }
}
