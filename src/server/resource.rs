//! `/mcp` as an OAuth 2.0 protected resource, the way MCP hosts discover how to log in: the
//! resource's metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and its `/mcp`
//! path form, naming the resource (`PUBLIC_BASE_URL` + `/mcp`) and the issuer that signs its
//! tokens; the `WWW-Authenticate` challenge of every 401 from `/mcp` pointing there; and the
//! identity rules of `/mcp`, whose OIDC tokens must be issued for that resource (its `aud`), so
//! a token meant for another service is never passed through to this one.

use super::{ApiError, AppState};
use crate::auth::identity::IdentitySettings;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;

/// Where the metadata is served (root form; the path form appends `/mcp`).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The MCP resource's identifier: where hosts reach `/mcp`.
pub fn mcp_resource(base: &str) -> String {
    format!("{base}/mcp")
}

/// Where a host reads the resource's metadata, through the same proxy as `/mcp`.
pub fn metadata_url(base: &str) -> String {
    format!("{base}{METADATA_PATH}/mcp")
}

/// The `WWW-Authenticate` value of a 401 from `/mcp`.
pub fn challenge(base: Option<&str>) -> String {
    match base {
        Some(base) => format!(r#"Bearer resource_metadata="{}""#, metadata_url(base)),
        None => "Bearer".to_string(),
    }
}

/// The protected-resource metadata document.
pub fn metadata(base: &str, issuer: &str) -> Value {
    json!({
        "resource": mcp_resource(base),
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
        "resource_name": "crowdvision-agent",
    })
}

/// The identity rules of `/mcp`: as every route's, except that an OIDC token must carry the
/// MCP resource in its `aud` once `PUBLIC_BASE_URL` names it.
pub fn mcp_identity(identity: &IdentitySettings, base: Option<&str>) -> IdentitySettings {
    let mut rules = identity.clone();
    if let (Some(oidc), Some(base)) = (rules.oidc.as_mut(), base) {
        oidc.audience = mcp_resource(base);
    }
    rules
}

/// Both forms of the metadata route.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(METADATA_PATH, get(served_metadata))
        .route(&format!("{METADATA_PATH}/mcp"), get(served_metadata))
}

/// The metadata, or 404 when there is nothing to log in with (no OIDC) or no public address.
async fn served_metadata(State(state): State<Arc<AppState>>) -> Response {
    match (&state.settings.public_base_url, &state.identity.oidc) {
        (Some(base), Some(oidc)) => Json(metadata(base, &oidc.issuer)).into_response(),
        _ => ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OidcSettings;

    const BASE: &str = "https://agent.example.com/agent";

    #[test]
    fn the_challenge_points_at_the_metadata_behind_the_same_prefix() {
        assert_eq!(
            challenge(Some(BASE)),
            r#"Bearer resource_metadata="https://agent.example.com/agent/.well-known/oauth-protected-resource/mcp""#
        );
        assert_eq!(challenge(None), "Bearer");
        let document = metadata(BASE, "https://login.example/realms/x");
        assert_eq!(document["resource"], "https://agent.example.com/agent/mcp");
        assert_eq!(
            document["authorization_servers"],
            json!(["https://login.example/realms/x"])
        );
    }

    #[test]
    fn mcp_tokens_must_be_issued_for_the_mcp_resource() {
        let identity = IdentitySettings {
            require_auth: true,
            jwt_secret: None,
            trust_gateway_header: false,
            oidc: Some(OidcSettings {
                jwks_url: "https://login.example/jwks".parse().unwrap(),
                issuer: "https://login.example".into(),
                audience: "crowdvision-agent".into(),
            }),
        };
        let mcp = mcp_identity(&identity, Some(BASE));
        assert_eq!(mcp.oidc.unwrap().audience, mcp_resource(BASE));
        let unnamed = mcp_identity(&identity, None);
        assert_eq!(unnamed.oidc.unwrap().audience, "crowdvision-agent");
    }
}
