//! Sign-in for the page ([`crate::auth::signin`]): `GET /auth/config` tells it whether and
//! where to send a person to sign in, `POST /auth/token` redeems its code or refresh token at
//! the identity provider. Every answer, errors included, is `no-store`; the provider's own
//! words never reach the page, only the tokens or `sign_in_refused` (start over) /
//! `identity_provider_unavailable`.

use super::errors::ApiError;
use super::request::{parse_json, require_json};
use super::AppState;
use crate::auth::signin::{Grant, SignInError, Tokens};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::Arc;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/auth/config", get(config))
        .route("/auth/token", post(token))
}

/// `{"sign_in": {client_id, authorize_url, scopes}}`, or `{"sign_in": null}` when the page
/// has no sign-in (no `OIDC_CLIENT_ID`).
#[utoipa::path(get, path = "/auth/config", responses(
    (status = 200, description = "`{sign_in: {client_id, authorize_url, scopes}}`, or `{sign_in: null}` without `OIDC_CLIENT_ID`"),
    (status = 502, description = "the identity provider's metadata could not be read", body = crate::contract::ErrorBody),
))]
pub(super) async fn config(State(state): State<Arc<AppState>>) -> Response {
    let sign_in = match &state.sign_in {
        Some(sign_in) => sign_in.for_page().await.map(Some),
        None => Ok(None),
    };
    no_store(match sign_in {
        Ok(sign_in) => Json(serde_json::json!({ "sign_in": sign_in })).into_response(),
        Err(error) => provider_failed(error).into_response(),
    })
}

/// The tokens for the page's grant: `{access_token, refresh_token?, expires_in?}`.
#[utoipa::path(post, path = "/auth/token", request_body(content = String, description = "`{grant_type: authorization_code, code, code_verifier, redirect_uri}` or `{grant_type: refresh_token, refresh_token}`", content_type = "application/json"), responses(
    (status = 200, description = "`{access_token, refresh_token?, expires_in?}`, nothing else the provider said"),
    (status = 400, description = "`sign_in_refused`: the provider did not accept the grant; `invalid_request`: the body is not such a grant", body = crate::contract::ErrorBody),
    (status = 404, description = "the page has no sign-in (no `OIDC_CLIENT_ID`)", body = crate::contract::ErrorBody),
    (status = 502, description = "`identity_provider_unavailable`", body = crate::contract::ErrorBody),
))]
pub(super) async fn token(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    no_store(match redeem(&state, &headers, body).await {
        Ok(tokens) => Json(tokens).into_response(),
        Err(error) => error.into_response(),
    })
}

async fn redeem(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Tokens, ApiError> {
    let Some(sign_in) = &state.sign_in else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "this server offers no sign-in",
        ));
    };
    require_json(headers)?;
    let grant: Grant = parse_json(body, "grant")?;
    sign_in.redeem(&grant).await.map_err(provider_failed)
}

fn provider_failed(error: SignInError) -> ApiError {
    tracing::warn!(%error, "page sign-in");
    match error {
        SignInError::Refused(_) => ApiError::new(
            StatusCode::BAD_REQUEST,
            "sign_in_refused",
            "the identity provider did not accept this sign-in; sign in again",
        ),
        SignInError::Unavailable(_) => ApiError::new(
            StatusCode::BAD_GATEWAY,
            "identity_provider_unavailable",
            "the identity provider cannot be reached; try again shortly",
        ),
    }
}

fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
