//! `POST /feedback`: thumbs up or down on one answer of the caller's own conversation, with a
//! reason, a comment and the expected answer; given again, it replaces the caller's earlier
//! feedback on that answer. Counted in `agent_feedback_total{rating,reason}` (bounded labels);
//! never logged with the question. With spans exported, also an `agent.feedback` event naming
//! the answer's trace ([`crate::observe::record_feedback`]).

use super::caller::caller;
use super::conversations::{cutoff, store, store_failed};
use super::errors::ApiError;
use super::request::{parse_json, require_json};
use super::AppState;
use crate::conversations::{self as kept, Feedback};
use crate::observe::metrics;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use std::sync::Arc;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/feedback", post(give))
}

/// 👍 or 👎 on one answer of the caller's own conversation; given again, it replaces the
/// caller's earlier feedback on that answer.
#[utoipa::path(post, path = "/feedback", request_body(content = String, description = "`{conversation_id, turn_id, rating: up|down, reason?: wrong_figure|wrong_building|wrong_language|missing_source|not_helpful|other, comment?, expected?}`", content_type = "application/json"), responses(
    (status = 200, description = "the feedback as kept"),
    (status = 404, description = "no such answer of the caller's", body = crate::contract::ErrorBody),
    (status = 422, description = "a rating or reason outside the lists, or text too long", body = crate::contract::ErrorBody),
))]
pub(super) async fn give(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    require_json(&headers)?;
    let caller = caller(&headers, &state).await?;
    let store = store(&state)?;
    let feedback: Feedback = parse_json(body, "feedback")?;
    let feedback = feedback.normalised().map_err(|refusal| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            refusal.to_string(),
        )
    })?;
    let kept_it = kept::well_formed_id(&feedback.conversation_id)
        && store
            .give_feedback(&caller.user, &feedback, kept::now_ms())
            .await
            .map_err(store_failed)?;
    if !kept_it {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "no such answer",
        ));
    }
    metrics::feedback(feedback.rating.as_str(), feedback.reason_label());
    kept::score_the_answers_trace(store.as_ref(), &caller.user.sub, &feedback, cutoff(&state))
        .await;
    Ok(Json(feedback).into_response())
}
