//! Sign-in from the page: the page is a public OIDC client (authorization code with PKCE). It
//! sends the person to the identity provider's authorize endpoint itself; the code it gets
//! back, and later its refresh token, are redeemed here, server to server, so that the page
//! talks to its own origin only (its CSP allows no other). Nothing secret is added on the way:
//! the verifier only the page knows is what makes a code worth anything.
//!
//! The endpoints are configured or read once from the issuer's metadata. What the provider
//! answers is never passed on: the page gets the tokens, or one of two errors.

use crate::config::{SignInEndpoints, SignInSettings};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One call to the identity provider, connect to last byte.
pub const IDP_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest metadata document or token response read.
pub const MAX_IDP_BYTES: usize = 256 * 1024;

/// What the page is told to start a sign-in with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageSignIn {
    pub client_id: String,
    pub authorize_url: String,
    pub scopes: String,
}

/// What the page asks to redeem (`grant_type` names it).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "grant_type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Grant {
    AuthorizationCode {
        code: String,
        code_verifier: String,
        redirect_uri: String,
    },
    RefreshToken {
        refresh_token: String,
    },
}

/// The tokens handed to the page; anything else the provider said stays here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Seconds the access token lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// The provider refused the grant (a used or expired code, a wrong verifier, a revoked
    /// refresh token): the page starts over.
    #[error("the identity provider refused the grant ({0})")]
    Refused(String),
    /// The provider could not be asked, or answered something that is not a token response.
    #[error("the identity provider {0}")]
    Unavailable(String),
}

impl Grant {
    /// The form the token endpoint takes for this grant, as `client_id`'s.
    pub fn form(&self, client_id: &str) -> Vec<(&'static str, String)> {
        let mut form = vec![("client_id", client_id.to_string())];
        match self {
            Grant::AuthorizationCode {
                code,
                code_verifier,
                redirect_uri,
            } => form.extend([
                ("grant_type", "authorization_code".to_string()),
                ("code", code.clone()),
                ("code_verifier", code_verifier.clone()),
                ("redirect_uri", redirect_uri.clone()),
            ]),
            Grant::RefreshToken { refresh_token } => form.extend([
                ("grant_type", "refresh_token".to_string()),
                ("refresh_token", refresh_token.clone()),
            ]),
        }
        form
    }
}

/// The two endpoints from an issuer's metadata document, which must name `issuer` as its own.
pub fn endpoints_from_metadata(body: &[u8], issuer: &str) -> Result<SignInEndpoints, SignInError> {
    #[derive(Deserialize)]
    struct Metadata {
        issuer: String,
        authorization_endpoint: String,
        token_endpoint: String,
    }
    let metadata: Metadata = serde_json::from_slice(body).map_err(|_| {
        SignInError::Unavailable("metadata names no authorization and token endpoints".into())
    })?;
    if metadata.issuer.trim_end_matches('/') != issuer.trim_end_matches('/') {
        return Err(SignInError::Unavailable(format!(
            "metadata is for issuer {:?}, not {issuer:?}",
            metadata.issuer
        )));
    }
    let url = |text: &str, name: &str| {
        url::Url::parse(text)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| SignInError::Unavailable(format!("metadata's {name} is not a URL")))
    };
    Ok(SignInEndpoints {
        authorize: url(&metadata.authorization_endpoint, "authorization_endpoint")?,
        token: url(&metadata.token_endpoint, "token_endpoint")?,
    })
}

/// The tokens in a token endpoint's answer of `status`. A 400 or 401 is the provider refusing
/// the grant; its `error` code is kept when it is a plain word, its description never.
pub fn tokens_from_response(status: u16, body: &[u8]) -> Result<Tokens, SignInError> {
    if matches!(status, 400 | 401) {
        #[derive(Deserialize)]
        struct Refusal {
            error: String,
        }
        let code = serde_json::from_slice::<Refusal>(body)
            .ok()
            .map(|r| r.error)
            .filter(|e| e.len() <= 40 && e.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
            .unwrap_or_else(|| "no error code".to_string());
        return Err(SignInError::Refused(code));
    }
    if !(200..300).contains(&status) {
        return Err(SignInError::Unavailable(format!("answered {status}")));
    }
    let tokens: Tokens = serde_json::from_slice(body)
        .map_err(|_| SignInError::Unavailable("answered no access token".into()))?;
    if tokens.access_token.is_empty() {
        return Err(SignInError::Unavailable(
            "answered an empty access token".into(),
        ));
    }
    Ok(tokens)
}

/// The page's sign-in against one provider: its endpoints (discovered once) and the relay.
pub struct SignIn {
    settings: SignInSettings,
    issuer: String,
    client: reqwest::Client,
    discovered: tokio::sync::OnceCell<SignInEndpoints>,
}

impl SignIn {
    pub fn new(settings: SignInSettings, issuer: String) -> SignIn {
        let client = crate::http::client_builder()
            .timeout(IDP_TIMEOUT)
            .connect_timeout(IDP_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        SignIn {
            settings,
            issuer,
            client,
            discovered: tokio::sync::OnceCell::new(),
        }
    }

    /// What the page needs to send a person to the provider.
    pub async fn for_page(&self) -> Result<PageSignIn, SignInError> {
        let endpoints = self.endpoints().await?;
        Ok(PageSignIn {
            client_id: self.settings.client_id.clone(),
            authorize_url: endpoints.authorize.to_string(),
            scopes: self.settings.scopes.clone(),
        })
    }

    /// Redeems `grant` at the token endpoint as the page's client.
    pub async fn redeem(&self, grant: &Grant) -> Result<Tokens, SignInError> {
        let token_url = self.endpoints().await?.token;
        let response = self
            .client
            .post(token_url)
            .header(reqwest::header::ACCEPT, "application/json")
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form_body(&grant.form(&self.settings.client_id)))
            .send()
            .await
            .map_err(|e| SignInError::Unavailable(crate::http::describe_error(&e)))?;
        let status = response.status().as_u16();
        let body = read_capped(response).await?;
        tokens_from_response(status, &body)
    }

    async fn endpoints(&self) -> Result<SignInEndpoints, SignInError> {
        if let Some(configured) = &self.settings.endpoints {
            return Ok(configured.clone());
        }
        // A failed discovery is not kept: the next request asks again.
        self.discovered
            .get_or_try_init(|| self.discover())
            .await
            .cloned()
    }

    /// The issuer's OpenID metadata, or its OAuth metadata (RFC 8414) when it has none.
    async fn discover(&self) -> Result<SignInEndpoints, SignInError> {
        let base = self.issuer.trim_end_matches('/');
        let mut last = SignInError::Unavailable("has no metadata".into());
        for document in ["openid-configuration", "oauth-authorization-server"] {
            let url = format!("{base}/.well-known/{document}");
            let response = match self.client.get(&url).send().await {
                Ok(response) => response,
                Err(e) => {
                    last = SignInError::Unavailable(format!(
                        "metadata at {url}: {}",
                        crate::http::describe_error(&e)
                    ));
                    continue;
                }
            };
            if !response.status().is_success() {
                last = SignInError::Unavailable(format!(
                    "metadata at {url} answered {}",
                    response.status()
                ));
                continue;
            }
            let body = read_capped(response).await?;
            return endpoints_from_metadata(&body, &self.issuer);
        }
        Err(last)
    }
}

fn form_body(fields: &[(&str, String)]) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in fields {
        form.append_pair(name, value);
    }
    form.finish()
}

async fn read_capped(response: reqwest::Response) -> Result<Vec<u8>, SignInError> {
    crate::http::read_capped(response, MAX_IDP_BYTES)
        .await
        .map_err(|failed| match failed {
            crate::http::CappedBody::TooLarge => {
                SignInError::Unavailable(format!("answered more than {MAX_IDP_BYTES} bytes"))
            }
            crate::http::CappedBody::Transport(e) => {
                SignInError::Unavailable(crate::http::describe_error(&e))
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUER: &str = "https://login.example.com/realms/acme";

    #[test]
    fn a_refused_grant_keeps_the_error_code_and_never_the_description() {
        let body = br#"{"error":"invalid_grant","error_description":"code abc123 for user pat@acme is used"}"#;
        let error = tokens_from_response(400, body).unwrap_err().to_string();
        assert!(error.contains("invalid_grant"), "{error}");
        assert!(
            !error.contains("pat@acme") && !error.contains("abc123"),
            "{error}"
        );
        let odd = br#"{"error":"<script>alert(1)</script>"}"#;
        let error = tokens_from_response(400, odd).unwrap_err().to_string();
        assert!(!error.contains("script"), "{error}");
        assert!(matches!(
            tokens_from_response(401, b"<html>no</html>"),
            Err(SignInError::Refused(_))
        ));
    }

    #[test]
    fn only_the_tokens_and_their_lifetime_reach_the_page() {
        let body = br#"{"access_token":"a.b.c","refresh_token":"r","expires_in":300,
            "id_token":"x.y.z","token_type":"Bearer","session_state":"s"}"#;
        let tokens = tokens_from_response(200, body).unwrap();
        let sent = serde_json::to_value(&tokens).unwrap();
        assert_eq!(
            sent,
            serde_json::json!({"access_token":"a.b.c","refresh_token":"r","expires_in":300})
        );
        for (status, body) in [
            (200, &b"{}"[..]),
            (200, br#"{"access_token":""}"#),
            (502, br#"{"access_token":"a"}"#),
            (200, b"<html>"),
        ] {
            assert!(
                matches!(
                    tokens_from_response(status, body),
                    Err(SignInError::Unavailable(_))
                ),
                "{status} {}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn metadata_must_be_the_issuers_own_and_name_both_endpoints() {
        let good = format!(
            r#"{{"issuer":"{ISSUER}/","authorization_endpoint":"{ISSUER}/auth","token_endpoint":"{ISSUER}/token"}}"#
        );
        let endpoints = endpoints_from_metadata(good.as_bytes(), ISSUER).unwrap();
        assert_eq!(endpoints.token.as_str(), format!("{ISSUER}/token"));
        let other = good.replace("realms/acme/\"", "realms/evil/\"");
        assert!(endpoints_from_metadata(other.as_bytes(), ISSUER).is_err());
        let no_token = format!(r#"{{"issuer":"{ISSUER}","authorization_endpoint":"{ISSUER}/a"}}"#);
        assert!(endpoints_from_metadata(no_token.as_bytes(), ISSUER).is_err());
        let script = good.replace(&format!("{ISSUER}/auth"), "javascript:alert(1)");
        assert!(endpoints_from_metadata(script.as_bytes(), ISSUER).is_err());
    }

    #[tokio::test]
    async fn an_unreachable_provider_is_unavailable_not_a_refusal() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = closed.local_addr().unwrap();
        drop(closed);
        let endpoint = |path: &str| url::Url::parse(&format!("http://{address}/{path}")).unwrap();
        let configured = SignIn::new(
            SignInSettings {
                client_id: "page".into(),
                endpoints: Some(SignInEndpoints {
                    authorize: endpoint("authorize"),
                    token: endpoint("token"),
                }),
                scopes: "openid".into(),
            },
            format!("http://{address}"),
        );
        let grant = Grant::RefreshToken {
            refresh_token: "r".into(),
        };
        assert!(matches!(
            configured.redeem(&grant).await,
            Err(SignInError::Unavailable(_))
        ));
        let discovered = SignIn::new(
            SignInSettings {
                client_id: "page".into(),
                endpoints: None,
                scopes: "openid".into(),
            },
            format!("http://{address}"),
        );
        assert!(matches!(
            discovered.for_page().await,
            Err(SignInError::Unavailable(_))
        ));
    }

    #[test]
    fn grants_become_the_token_endpoints_form_and_nothing_else_is_accepted() {
        let code: Grant = serde_json::from_value(serde_json::json!({
            "grant_type": "authorization_code", "code": "c", "code_verifier": "v",
            "redirect_uri": "https://agent.example.com/agent/"
        }))
        .unwrap();
        let form = code.form("page");
        assert!(form.contains(&("client_id", "page".to_string())));
        assert!(form.contains(&("code_verifier", "v".to_string())));
        assert!(form.contains(&("grant_type", "authorization_code".to_string())));
        let refresh: Grant = serde_json::from_value(serde_json::json!({
            "grant_type": "refresh_token", "refresh_token": "r"
        }))
        .unwrap();
        assert!(refresh
            .form("page")
            .contains(&("refresh_token", "r".to_string())));
        for refused in [
            serde_json::json!({"grant_type": "client_credentials"}),
            serde_json::json!({"grant_type": "password", "username": "u", "password": "p"}),
            serde_json::json!({"grant_type": "refresh_token", "refresh_token": "r", "client_secret": "s"}),
        ] {
            assert!(
                serde_json::from_value::<Grant>(refused.clone()).is_err(),
                "{refused}"
            );
        }
    }
}
