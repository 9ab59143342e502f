//! `/conversations`: a caller's own conversations, kept in the store so that every replica
//! sees them. `GET /conversations` (newest first, `limit`/`offset`, `q` matches every word
//! in a question, an answer or the title), `POST /conversations`, `GET`/`PATCH`/`DELETE
//! /conversations/{id}`; and, for `/ask`, the stored history of a `conversation_id` and the
//! turn added once answered. Another caller's conversation is the same 404 as an unknown one:
//! every lookup is by owner and id together, in SQL.

use super::caller::caller;
use super::errors::ApiError;
use super::request::{parse_json, require_json};
use super::AppState;
use crate::auth::identity::Caller;
use crate::contract::{AskResponse, HistoryMessage};
use crate::conversations::{self as kept, ConversationError, ConversationStore, ListQuery, Turn};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use std::sync::Arc;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/conversations", get(list).post(create))
        .route(
            "/conversations/{id}",
            get(show).patch(rename).delete(delete),
        )
}

/// The one answer for a conversation that is unknown, another caller's, expired, or kept by
/// no one (`CONVERSATIONS=false`).
pub fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such conversation")
}

pub(super) fn store_failed(error: ConversationError) -> ApiError {
    tracing::warn!(%error, "conversation store");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "store_unavailable",
        "the conversation store is not answering",
    )
}

pub(super) fn store(state: &AppState) -> Result<&Arc<dyn ConversationStore>, ApiError> {
    state.conversations.as_ref().ok_or_else(not_found)
}

pub(super) fn cutoff(state: &AppState) -> i64 {
    kept::retention_cutoff(kept::now_ms(), state.settings.conversation_retention_days)
}

#[derive(Debug, Deserialize)]
pub(super) struct ListParams {
    limit: Option<u32>,
    offset: Option<u32>,
    q: Option<String>,
}

/// The caller's own conversations, newest first.
#[utoipa::path(get, path = "/conversations", params(
    ("limit" = Option<u32>, Query, description = "at most this many (default 20, at most 100)"),
    ("offset" = Option<u32>, Query, description = "skip this many"),
    ("q" = Option<String>, Query, description = "only those whose title or turns hold every word"),
), responses(
    (status = 200, description = "`{conversations: [{id, title, created_ms, updated_ms, turns}], limit, offset}`"),
    (status = 401, description = "no usable identity", body = crate::contract::ErrorBody),
    (status = 404, description = "conversations are not kept (`CONVERSATIONS=false`)", body = crate::contract::ErrorBody),
))]
pub(super) async fn list(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Query(params): Query<ListParams>,
) -> Result<Response, ApiError> {
    let caller = caller(&headers, &state).await?;
    let store = store(&state)?;
    let query = ListQuery {
        limit: kept::page_size(params.limit),
        offset: params.offset.unwrap_or(0),
        since_ms: cutoff(&state),
        words: kept::search_patterns(params.q.as_deref()),
    };
    let conversations = store
        .list(&caller.user.sub, &query)
        .await
        .map_err(store_failed)?;
    Ok(Json(serde_json::json!({
        "conversations": conversations,
        "limit": query.limit,
        "offset": query.offset,
    }))
    .into_response())
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TitleBody {
    #[serde(default)]
    title: Option<String>,
}

/// A new, empty conversation of the caller's; `POST /ask` with its id adds the turns.
#[utoipa::path(post, path = "/conversations", request_body(content = String, description = "`{title?}`, or no body", content_type = "application/json"), responses(
    (status = 201, description = "`{id, title, created_ms, updated_ms}`"),
    (status = 401, description = "no usable identity", body = crate::contract::ErrorBody),
    (status = 404, description = "conversations are not kept", body = crate::contract::ErrorBody),
))]
pub(super) async fn create(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let caller = caller(&headers, &state).await?;
    let store = store(&state)?;
    let body: TitleBody = match &body {
        Ok(bytes) if bytes.is_empty() => TitleBody::default(),
        _ => {
            require_json(&headers)?;
            parse_json(body, "a conversation")?
        }
    };
    let now = kept::now_ms();
    // Conversations past retention go as new ones come: reads never show them anyway.
    let cutoff = kept::retention_cutoff(now, state.settings.conversation_retention_days);
    if cutoff > i64::MIN {
        store.purge_before(cutoff).await.map_err(store_failed)?;
    }
    let title = kept::title_of(body.title.as_deref().unwrap_or_default());
    let created = store
        .create(&caller.user.sub, &kept::new_id(), &title, now)
        .await
        .map_err(store_failed)?;
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// One of the caller's conversations with its turns (question, answer, citations, decision,
/// model, usage, language, time).
#[utoipa::path(get, path = "/conversations/{id}", params(("id" = String, Path, description = "the conversation")), responses(
    (status = 200, description = "`{id, title, created_ms, updated_ms, turns: [...]}`"),
    (status = 401, description = "no usable identity", body = crate::contract::ErrorBody),
    (status = 404, description = "unknown, another caller's, or past retention: one answer for all", body = crate::contract::ErrorBody),
))]
pub(super) async fn show(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let caller = caller(&headers, &state).await?;
    let store = store(&state)?;
    if !kept::well_formed_id(&id) {
        return Err(not_found());
    }
    match store
        .get(&caller.user.sub, &id, cutoff(&state))
        .await
        .map_err(store_failed)?
    {
        Some(conversation) => Ok(Json(conversation).into_response()),
        None => Err(not_found()),
    }
}

/// A new title.
#[utoipa::path(patch, path = "/conversations/{id}", params(("id" = String, Path, description = "the conversation")), request_body(content = String, description = "`{title}`", content_type = "application/json"), responses(
    (status = 200, description = "`{id, title}`"),
    (status = 404, description = "no such conversation of the caller's", body = crate::contract::ErrorBody),
))]
pub(super) async fn rename(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    require_json(&headers)?;
    let caller = caller(&headers, &state).await?;
    let store = store(&state)?;
    let body: TitleBody = parse_json(body, "a conversation")?;
    let title = kept::title_of(body.title.as_deref().unwrap_or_default());
    if !kept::well_formed_id(&id) {
        return Err(not_found());
    }
    let renamed = store
        .rename(&caller.user.sub, &id, &title, cutoff(&state))
        .await
        .map_err(store_failed)?;
    if !renamed {
        return Err(not_found());
    }
    Ok(Json(serde_json::json!({"id": id, "title": title})).into_response())
}

/// Deletes the conversation with its turns, shares and feedback.
#[utoipa::path(delete, path = "/conversations/{id}", params(("id" = String, Path, description = "the conversation")), responses(
    (status = 204, description = "deleted"),
    (status = 404, description = "no such conversation of the caller's", body = crate::contract::ErrorBody),
))]
pub(super) async fn delete(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let caller = caller(&headers, &state).await?;
    let store = store(&state)?;
    if !kept::well_formed_id(&id)
        || !store
            .delete(&caller.user.sub, &id)
            .await
            .map_err(store_failed)?
    {
        return Err(not_found());
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Where an answer's turn is kept once given.
#[derive(Clone)]
pub struct Keeping {
    store: Arc<dyn ConversationStore>,
    /// Whose conversation it is (its `sub` owns it; its domains name what a building list read).
    asker: crate::auth::AuthUser,
    id: String,
    since_ms: i64,
}

/// The stored history of `caller`'s conversation `id`, and where its next turn goes; 404 when
/// there is no such conversation of theirs.
pub async fn resume(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<(Vec<HistoryMessage>, Keeping), ApiError> {
    let store = store(state)?;
    if !kept::well_formed_id(id) {
        return Err(not_found());
    }
    let since_ms = cutoff(state);
    let conversation = store
        .get(&caller.user.sub, id, since_ms)
        .await
        .map_err(store_failed)?
        .ok_or_else(not_found)?;
    let keeping = Keeping {
        store: store.clone(),
        asker: caller.user.clone(),
        id: id.to_string(),
        since_ms,
    };
    Ok((kept::history_of(&conversation.turns), keeping))
}

impl Keeping {
    /// Adds the answered turn and says where it went. A failure is logged: the answer has been
    /// given and stands.
    pub async fn keep(&self, question: &str, response: &AskResponse) -> Option<KeptTurn> {
        let language = crate::agent::question::language::detect(question)
            .map(|language| language.code().to_string());
        let turn = Turn::of(question, response, &self.asker, language, kept::now_ms());
        match self
            .store
            .append(&self.asker.sub, &self.id, &turn, self.since_ms)
            .await
        {
            Ok(Some(turn_id)) => Some(KeptTurn {
                conversation_id: self.id.clone(),
                turn_id,
            }),
            Ok(None) => {
                tracing::warn!("the conversation went before its turn could be kept");
                None
            }
            Err(error) => {
                tracing::warn!(%error, "a conversation turn was not kept");
                None
            }
        }
    }
}

/// Where an answer was kept: what feedback on it names.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KeptTurn {
    pub conversation_id: String,
    pub turn_id: i64,
}
