//! Share links. `POST /conversations/{id}/share` makes one (a random token, shown once),
//! `GET /shares` lists the caller's own, `DELETE /shares/{id}` revokes one, and `GET
//! /shares/{token}` shows the conversation read-only, re-checked against the viewer on every
//! view: each citation is looked up with the viewer's permissions in the store, and each
//! building whose live data an answer read is asked for as the viewer from the downstream
//! service ([`crate::conversations::sharing`] decides what that leaves). Unknown, revoked and
//! expired tokens are one 404.

use super::caller::caller;
use super::conversations::{cutoff, not_found, store, store_failed};
use super::errors::ApiError;
use super::request::{parse_json, require_json};
use super::AppState;
use crate::agent::tools::ToolContext;
use crate::auth::identity::Caller;
use crate::citations::Citation;
use crate::conversations::sharing::{self, ShareRefusal, SharedTurn};
use crate::conversations::{self as kept, Turn, ALL_BUILDINGS, DOMAIN_PREFIX};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/conversations/{id}/share", post(make))
        .route("/shares", get(list))
        .route("/shares/{key}", get(view).delete(revoke))
}

fn share_not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such share")
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShareBody {
    /// Days until the link stops working (1–90, 7 when not given).
    #[serde(default)]
    days: Option<u32>,
    /// Viewable without signing in: only for conversations citing public passages alone and
    /// reading no live data.
    #[serde(default)]
    public: bool,
}

/// A share link to one of the caller's conversations: a random token, shown once.
#[utoipa::path(post, path = "/conversations/{id}/share", params(("id" = String, Path, description = "the conversation")), request_body(content = String, description = "`{days?: 1-90 (7), public?: false}`, or no body", content_type = "application/json"), responses(
    (status = 201, description = "`{id, token, path, conversation_id, created_ms, expires_ms, public}`"),
    (status = 404, description = "no such conversation of the caller's", body = crate::contract::ErrorBody),
    (status = 422, description = "`share_refused`: days out of range, or public with a restricted passage or live data", body = crate::contract::ErrorBody),
))]
pub(super) async fn make(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let caller = caller(&headers, &state).await?;
    let store = store(&state)?;
    let body: ShareBody = match &body {
        Ok(bytes) if bytes.is_empty() => ShareBody::default(),
        _ => {
            require_json(&headers)?;
            parse_json(body, "a share")?
        }
    };
    if !kept::well_formed_id(&id) {
        return Err(not_found());
    }
    let since = cutoff(&state);
    if body.public {
        // Only a public share needs the turns: `share` below checks ownership itself.
        let conversation = store
            .get(&caller.user.sub, &id, since)
            .await
            .map_err(store_failed)?
            .ok_or_else(not_found)?;
        let public = readable_passages(&state, &[], &conversation.turns).await?;
        if !sharing::may_be_public(&conversation.turns, |c| public[&key(c)]) {
            return Err(refused(ShareRefusal::NotPublic));
        }
    }
    let (new, token) =
        sharing::new_share(&id, kept::now_ms(), body.days, body.public).map_err(refused)?;
    if !store
        .share(&caller.user.sub, &new, since)
        .await
        .map_err(store_failed)?
    {
        return Err(not_found());
    }
    Ok((
        StatusCode::CREATED,
        Json(serde_json::json!({
            "id": new.share.id,
            "token": token,
            "path": format!("?share={token}"),
            "conversation_id": id,
            "created_ms": new.share.created_ms,
            "expires_ms": new.share.expires_ms,
            "public": new.share.public,
        })),
    )
        .into_response())
}

fn refused(refusal: ShareRefusal) -> ApiError {
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "share_refused",
        refusal.to_string(),
    )
}

/// The caller's shares that have not expired.
#[utoipa::path(get, path = "/shares", responses(
    (status = 200, description = "`{shares: [{id, conversation_id, created_ms, expires_ms, public}]}`"),
    (status = 401, description = "no usable identity", body = crate::contract::ErrorBody),
))]
pub(super) async fn list(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let caller = caller(&headers, &state).await?;
    let shares = store(&state)?
        .shares(&caller.user.sub, kept::now_ms())
        .await
        .map_err(store_failed)?;
    Ok(Json(serde_json::json!({ "shares": shares })).into_response())
}

/// Revokes one of the caller's shares (by its id, not its token).
#[utoipa::path(delete, path = "/shares/{key}", params(("key" = String, Path, description = "the share's id")), responses(
    (status = 204, description = "revoked"),
    (status = 404, description = "no such share of the caller's", body = crate::contract::ErrorBody),
))]
pub(super) async fn revoke(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let caller = caller(&headers, &state).await?;
    let store = store(&state)?;
    if !sharing::well_formed_share_id(&id)
        || !store
            .revoke(&caller.user.sub, &id)
            .await
            .map_err(store_failed)?
    {
        return Err(share_not_found());
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// A share as the viewer may see it. Without credentials only a public share opens; every
/// other request without them is refused as unauthenticated, whether its token exists or not.
#[utoipa::path(get, path = "/shares/{key}", params(("key" = String, Path, description = "the share's token")), responses(
    (status = 200, description = "`{title, created_ms, expires_ms, public, turns}` as the viewer may see it: restricted citations without excerpts, live answers of buildings the viewer cannot see withheld"),
    (status = 401, description = "a share that is not public, viewed without signing in", body = crate::contract::ErrorBody),
    (status = 404, description = "unknown, revoked or expired: one answer for all", body = crate::contract::ErrorBody),
))]
pub(super) async fn view(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Result<Response, ApiError> {
    let viewer = caller(&headers, &state).await;
    let store = store(&state)?;
    let shared = if sharing::well_formed_token(&token) {
        store
            .open_share(&sharing::token_digest(&token), kept::now_ms())
            .await
            .map_err(store_failed)?
    } else {
        None
    };
    let (viewer, shared) = match (viewer, shared) {
        (Ok(viewer), Some(shared)) => (viewer, shared),
        (Err(_), Some(shared)) if shared.share.public => (Caller::anonymous(), shared),
        (Err(unauthenticated), _) => return Err(unauthenticated),
        (Ok(_), None) => return Err(share_not_found()),
    };
    let turns = viewed_turns(&state, &viewer, &shared.owner, &shared.turns).await?;
    Ok(Json(serde_json::json!({
        "title": shared.title,
        "created_ms": shared.share.created_ms,
        "expires_ms": shared.share.expires_ms,
        "public": shared.share.public,
        "turns": turns,
    }))
    .into_response())
}

async fn viewed_turns(
    state: &AppState,
    viewer: &Caller,
    owner: &str,
    turns: &[Turn],
) -> Result<Vec<SharedTurn>, ApiError> {
    let readable = readable_passages(state, &viewer.user.effective_permissions(), turns).await?;
    let mut buildings: HashMap<String, bool> = HashMap::new();
    let mut viewed = Vec::with_capacity(turns.len());
    for turn in turns {
        let live_visible = match &turn.live {
            None => true,
            Some(_) if viewer.user.sub == owner => true,
            Some(read) => {
                let mut all = true;
                for building in read {
                    let seen = match buildings.get(building) {
                        Some(seen) => *seen,
                        None => {
                            let seen = sees_building(state, viewer, building).await;
                            buildings.insert(building.clone(), seen);
                            seen
                        }
                    };
                    all &= seen;
                }
                all
            }
        };
        viewed.push(sharing::view_turn(
            turn,
            |c| readable[&key(c)],
            live_visible,
        ));
    }
    Ok(viewed)
}

/// Whether `viewer` sees what an answer read of `building`: a domain's buildings when Cedar
/// lets them see the domain, one building when the downstream service shows it to them. `*`
/// (every domain, read by a platform administrator) is never assumed to be the viewer's.
async fn sees_building(state: &AppState, viewer: &Caller, building: &str) -> bool {
    if let Some(domain) = building.strip_prefix(DOMAIN_PREFIX) {
        return state.authz.can_access_domain(&viewer.user, domain);
    }
    if building == ALL_BUILDINGS || viewer.forwarded_claims.is_none() {
        return false;
    }
    state
        .agent
        .tools()
        .call(
            "get_building",
            serde_json::json!({ "building_id": building }),
            ToolContext::for_caller(viewer),
        )
        .await
        .ok
}

fn key(citation: &Citation) -> (String, String) {
    (citation.source.clone(), citation.chunk_id.clone())
}

/// Whether `permissions` may read each passage `turns` cite, asked of the store once per page.
async fn readable_passages(
    state: &AppState,
    permissions: &[String],
    turns: &[Turn],
) -> Result<HashMap<(String, String), bool>, ApiError> {
    let mut readable_by_page: HashMap<String, Vec<String>> = HashMap::new();
    let mut flags = HashMap::new();
    for citation in turns.iter().flat_map(|turn| &turn.citations) {
        if !readable_by_page.contains_key(&citation.source) {
            let chunks = state
                .retriever
                .store
                .page_chunks(&citation.source, permissions)
                .await
                .map_err(|error| {
                    tracing::warn!(%error, "share: reading a page's chunks");
                    ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "store_unavailable",
                        "the knowledge base is not answering",
                    )
                })?;
            readable_by_page.insert(
                citation.source.clone(),
                chunks.into_iter().map(|chunk| chunk.chunk_id).collect(),
            );
        }
        let readable = readable_by_page[&citation.source].contains(&citation.chunk_id);
        flags.insert(key(citation), readable);
    }
    Ok(flags)
}
