//! What every JSON route checks of a request's body: declared JSON (415), within the body
//! limit (413), parsing (400, with a bounded detail), and a question that is neither blank nor
//! too long (422).

use super::errors::ApiError;
use super::AppState;
use crate::agent::error::AgentError;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};

/// The request's headers moved out of it, where axum's `HeaderMap` extractor copies them (a
/// hash table allocated and filled per request). Only for a handler whose later extractors
/// read no header: the body extractors read the body and the body limit, not the headers.
pub struct TakenHeaders(pub HeaderMap);

impl<S: Send + Sync> FromRequestParts<S> for TakenHeaders {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(TakenHeaders(std::mem::take(&mut parts.headers)))
    }
}

/// Longest part of a parse error sent back.
const MAX_DETAIL_CHARS: usize = 200;

/// A body must be declared JSON (`application/json`, parameters allowed): 415 otherwise, so
/// that a plain cross-site form (which cannot send that type without a preflight) can never
/// post to the API.
pub fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let declared = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next());
    if declared.is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json")) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the body must be application/json",
        ))
    }
}

/// The body as JSON of `T` (`what` names it in the error): 413 past the body limit, 400 when
/// it does not parse.
pub fn parse_json<T: serde::de::DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
    what: &str,
) -> Result<T, ApiError> {
    let body = read_body(body)?;
    serde_json::from_slice(&body).map_err(|e| {
        let detail: String = e.to_string().chars().take(MAX_DETAIL_CHARS).collect();
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("the body is not {what}: {detail}"),
        )
    })
}

fn read_body(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                "the request body is too large",
            )
        } else {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_body",
                "the request body could not be read",
            )
        }
    })
}

pub fn question<'q>(text: &'q str, state: &AppState) -> Result<&'q str, ApiError> {
    match crate::agent::error::question_refusal(text, state.settings.max_question_chars) {
        Some(AgentError::QuestionEmpty) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "question_empty",
            "the question is empty",
        )),
        Some(AgentError::QuestionTooLong { limit }) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "question_too_long",
            format!("the question is longer than {limit} characters"),
        )),
        _ => Ok(text),
    }
}
