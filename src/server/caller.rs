//! The caller of a request, from its identity headers: exactly one value per header, the
//! identity path [`plan`] chooses, the JWKS key looked up for an OIDC token, [`finish`].

use super::errors::ApiError;
use super::AppState;
use crate::auth::identity::{
    finish, plan, Caller, Credentials, IdentitySettings, Plan, RefusalReason,
};
use crate::auth::jwks::KeyLookup;
use axum::http::{header, HeaderMap, HeaderName};

pub const CLAIMS_HEADER: &str = "x-gateway-claims";

/// The caller of a request: exactly one value per identity header, the identity path chosen,
/// the JWKS key looked up for an OIDC token. Refusals are logged with their reason (never the
/// token or the claims); a JWKS that could not be read yet is a 503 to retry, not a 401.
pub async fn caller(headers: &HeaderMap, state: &AppState) -> Result<Caller, ApiError> {
    caller_under(headers, state, &state.identity).await
}

/// As [`caller`], under the identity rules of one route (`/mcp` has its own audience).
pub async fn caller_under(
    headers: &HeaderMap,
    state: &AppState,
    rules: &IdentitySettings,
) -> Result<Caller, ApiError> {
    let refused = |reason: RefusalReason| {
        tracing::warn!(%reason, "request refused as unauthenticated");
        ApiError::unauthenticated()
    };
    let claims = single(headers, &HeaderName::from_static(CLAIMS_HEADER)).map_err(refused)?;
    let authorization = single(headers, &header::AUTHORIZATION).map_err(refused)?;
    let cookies: Vec<&str> = headers
        .get_all(header::COOKIE)
        .iter()
        .map(|v| v.to_str().map_err(|_| refused(RefusalReason::Missing)))
        .collect::<Result<_, _>>()?;
    let cookie = (!cookies.is_empty()).then(|| cookies.join("; "));
    let credentials = Credentials {
        claims_header: claims,
        cookie_header: cookie.as_deref(),
        authorization,
    };
    let plan = plan(credentials, rules).map_err(refused)?;
    let key = match (&plan, &state.jwks) {
        (Plan::Oidc { kid, .. }, Some(jwks)) => match jwks.key(kid).await {
            KeyLookup::Found(key) => Some(key),
            KeyLookup::Unknown => None,
            KeyLookup::Unavailable => {
                tracing::warn!("request held back: the OIDC key set could not be read yet");
                return Err(ApiError::identity_unavailable(
                    state.settings.retry_after_seconds.max(5),
                ));
            }
        },
        _ => None,
    };
    let now = crate::clock::unix_seconds();
    let caller = finish(plan, rules, key.as_ref(), now).map_err(refused)?;
    tracing::debug!(sub = %caller.user.sub, "request identified");
    Ok(caller)
}

/// A header that may appear at most once; twice is a refusal, not "first wins".
fn single<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Result<Option<&'h str>, RefusalReason> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(RefusalReason::Duplicate);
    }
    first
        .map(|v| v.to_str().map_err(|_| RefusalReason::Missing))
        .transpose()
}
