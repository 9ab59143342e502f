//! Who is asking, from what a request carries. In order:
//!
//! 1. `x-gateway-claims` present: its claims (the edge verified them), and nothing else. A
//!    header that is present but unusable (too large, not base64 JSON, no subject, expired) is
//!    refused; it never falls through to the next path.
//! 2. No claims header and `EVAL_JWT_SECRET` set: an HS256 token from the
//!    `authentication_token` cookie or `Authorization: Bearer`. When both carry a token they must
//!    be the same token.
//! 3. Nothing presented and `REQUIRE_AUTH=false`: the anonymous caller.
//!
//! Anything else is unauthenticated. Every refusal is the same [`AuthError::Unauthenticated`]
//! to the caller (HTTP 401 without detail); the reason is only logged. Pure: the clock is passed.

use super::jwt::{verify_hs256, JwtError};
use super::{AuthUser, ClaimsError};
use base64::Engine;

/// The cookie the development token travels in.
pub const TOKEN_COOKIE: &str = "authentication_token";

/// Header values longer than this are refused before parsing.
const MAX_HEADER_BYTES: usize = 16 * 1024;

/// What a request presented, as raw header values.
#[derive(Debug, Clone, Copy, Default)]
pub struct Credentials<'a> {
    pub claims_header: Option<&'a str>,
    pub cookie_header: Option<&'a str>,
    pub authorization: Option<&'a str>,
}

#[derive(Debug, Clone)]
pub struct IdentitySettings {
    pub require_auth: bool,
    pub jwt_secret: Option<String>,
}

/// An identified caller, with the claims header to forward to the downstream services
/// (`None` for the anonymous caller, who may not call them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: AuthUser,
    pub forwarded_claims: Option<String>,
}

impl Caller {
    /// A caller whose claims header is minted from the user (the dev-token and CLI paths).
    pub fn minted(user: AuthUser) -> Caller {
        Caller {
            forwarded_claims: Some(user.to_claims_header()),
            user,
        }
    }

    /// A caller whose claims arrived as `claims` (JSON or base64 of JSON): forwarded as they
    /// came, in the base64 form the downstream services read.
    pub fn forwarding(user: AuthUser, claims: &str) -> Caller {
        let claims = claims.trim();
        let header = if claims.starts_with('{') {
            base64::engine::general_purpose::STANDARD.encode(claims)
        } else {
            claims.to_string()
        };
        Caller {
            user,
            forwarded_claims: Some(header),
        }
    }

    pub fn anonymous() -> Caller {
        Caller {
            user: AuthUser::anonymous(),
            forwarded_claims: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("authentication required")]
    Unauthenticated,
}

/// Why a request was refused; for the log only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefusalReason {
    #[error("claims header: {0}")]
    Claims(#[from] ClaimsError),
    #[error("claims header has expired")]
    ClaimsExpired,
    #[error("a header is too large")]
    TooLarge,
    #[error("dev token: {0}")]
    Token(#[from] JwtError),
    #[error("the cookie and the Authorization header carry different tokens")]
    ConflictingTokens,
    #[error("no credentials")]
    Missing,
    #[error("more than one identity source (claims header and a token)")]
    SeveralSources,
}

/// Identifies the caller of a request at `now` (seconds since the epoch).
pub fn identify(
    credentials: Credentials<'_>,
    settings: &IdentitySettings,
    now: f64,
) -> Result<Caller, AuthError> {
    identify_with_reason(credentials, settings, now).map_err(|reason| {
        tracing::info!(%reason, "request refused as unauthenticated");
        AuthError::Unauthenticated
    })
}

/// As [`identify`], keeping the reason (for tests and logs).
pub fn identify_with_reason(
    credentials: Credentials<'_>,
    settings: &IdentitySettings,
    now: f64,
) -> Result<Caller, RefusalReason> {
    if let Some(header) = credentials.claims_header {
        // One identity per request: a token beside the claims is refused, not ignored.
        let token_too = credentials.authorization.and_then(bearer_token).is_some()
            || credentials.cookie_header.and_then(cookie_token).is_some();
        if token_too {
            return Err(RefusalReason::SeveralSources);
        }
        return from_claims_header(header, now);
    }
    if let Some(secret) = &settings.jwt_secret {
        if let Some(token) = dev_token(credentials)? {
            let user = verify_hs256(token, secret.as_bytes(), now)?;
            return Ok(Caller::minted(user));
        }
    }
    if settings.require_auth {
        Err(RefusalReason::Missing)
    } else {
        Ok(Caller::anonymous())
    }
}

fn from_claims_header(header: &str, now: f64) -> Result<Caller, RefusalReason> {
    if header.len() > MAX_HEADER_BYTES {
        return Err(RefusalReason::TooLarge);
    }
    let (user, expiry) = AuthUser::from_claims_with_expiry(header)?;
    if expiry.is_some_and(|exp| exp + super::jwt::LEEWAY_SECONDS <= now) {
        return Err(RefusalReason::ClaimsExpired);
    }
    Ok(Caller::forwarding(user, header))
}

/// The token from the cookie and/or the bearer header; both present must agree.
fn dev_token<'a>(credentials: Credentials<'a>) -> Result<Option<&'a str>, RefusalReason> {
    let too_large = |value: Option<&str>| value.is_some_and(|v| v.len() > MAX_HEADER_BYTES);
    if too_large(credentials.cookie_header) || too_large(credentials.authorization) {
        return Err(RefusalReason::TooLarge);
    }
    let from_cookie = credentials.cookie_header.and_then(cookie_token);
    let from_bearer = credentials.authorization.and_then(bearer_token);
    match (from_cookie, from_bearer) {
        (Some(a), Some(b)) if a != b => Err(RefusalReason::ConflictingTokens),
        (Some(token), _) | (None, Some(token)) => Ok(Some(token)),
        (None, None) => Ok(None),
    }
}

fn cookie_token(cookie_header: &str) -> Option<&str> {
    cookie_header.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name.trim() == TOKEN_COOKIE).then(|| value.trim().trim_matches('"'))
    })
}

fn bearer_token(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::jwt::sign_hs256;
    use base64::Engine;
    use serde_json::json;

    const NOW: f64 = 1_800_000_000.0;
    const SECRET: &str = "eval-secret";

    fn settings(require_auth: bool, secret: bool) -> IdentitySettings {
        IdentitySettings {
            require_auth,
            jwt_secret: secret.then(|| SECRET.to_string()),
        }
    }

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    fn header(value: &str) -> Credentials<'_> {
        Credentials {
            claims_header: Some(value),
            ..Credentials::default()
        }
    }

    fn token(claims: serde_json::Value, secret: &str) -> String {
        sign_hs256(&claims, secret.as_bytes())
    }

    fn valid_token() -> String {
        token(
            json!({"sub": "eval", "roles": ["business_staff"], "domains": ["acme"], "exp": NOW + 300.0}),
            SECRET,
        )
    }

    fn reason(credentials: Credentials<'_>, settings: &IdentitySettings) -> RefusalReason {
        identify_with_reason(credentials, settings, NOW).unwrap_err()
    }

    #[test]
    fn the_gateway_header_is_trusted_and_forwarded_as_is() {
        let value =
            b64(r#"{"sub":"ana","memberships":[{"domain":"acme","role":"business_staff"}]}"#);
        let caller = identify(header(&value), &settings(true, true), NOW).unwrap();
        assert_eq!(caller.user.domains, ["acme"]);
        assert_eq!(caller.forwarded_claims.as_deref(), Some(value.as_str()));
    }

    #[test]
    fn an_unusable_claims_header_is_refused_and_never_falls_through() {
        let s = settings(false, true);
        let bearer = format!("Bearer {}", valid_token());
        // A valid token beside claims, usable or not, is refused: one identity per request.
        for claims in ["%%%not-base64%%%", r#"{"sub":"ana"}"#] {
            let both = Credentials {
                claims_header: Some(claims),
                authorization: Some(bearer.as_str()),
                ..Credentials::default()
            };
            assert_eq!(reason(both, &s), RefusalReason::SeveralSources);
        }
        let cookie = format!("{TOKEN_COOKIE}={}", valid_token());
        let with_cookie = Credentials {
            claims_header: Some(r#"{"sub":"ana"}"#),
            cookie_header: Some(cookie.as_str()),
            ..Credentials::default()
        };
        assert_eq!(reason(with_cookie, &s), RefusalReason::SeveralSources);
        // Malformed base64, and base64 of something that is not JSON.
        assert_eq!(
            reason(header("%%%not-base64%%%"), &s),
            RefusalReason::Claims(ClaimsError::Malformed)
        );
        let not_json = b64("sub=ana");
        assert_eq!(
            reason(header(&not_json), &s),
            RefusalReason::Claims(ClaimsError::Malformed)
        );
        assert_eq!(
            reason(header(""), &s),
            RefusalReason::Claims(ClaimsError::Malformed)
        );
        let no_subject = b64(r#"{"memberships":[]}"#);
        assert_eq!(
            reason(header(&no_subject), &s),
            RefusalReason::Claims(ClaimsError::MissingSubject)
        );
        // One megabyte of header, refused before decoding.
        let huge = "A".repeat(1024 * 1024);
        assert_eq!(reason(header(&huge), &s), RefusalReason::TooLarge);
        let expired = b64(&format!(r#"{{"sub":"ana","exp":{}}}"#, NOW - 3600.0));
        assert_eq!(reason(header(&expired), &s), RefusalReason::ClaimsExpired);
        // Each of these is the same opaque 401 to the caller.
        assert_eq!(
            identify(header(&huge), &s, NOW),
            Err(AuthError::Unauthenticated)
        );
    }

    #[test]
    fn a_header_of_plain_json_is_forwarded_as_base64() {
        let json = r#"{"sub":"ana","memberships":[{"domain":"acme","role":"business_staff"}]}"#;
        let caller = identify(header(json), &settings(true, false), NOW).unwrap();
        assert_eq!(caller.forwarded_claims, Some(b64(json)));
    }

    #[test]
    fn missing_memberships_mean_a_caller_with_no_roles_and_no_domains() {
        let value = b64(r#"{"sub":"ana","email":"ana@example.com"}"#);
        let caller = identify(header(&value), &settings(true, false), NOW).unwrap();
        assert!(caller.user.roles.is_empty() && caller.user.domains.is_empty());
    }

    #[test]
    fn the_dev_token_works_from_cookie_or_bearer_only_with_the_secret() {
        let t = valid_token();
        let cookie = format!("theme=dark; {TOKEN_COOKIE}={t}");
        let bearer = format!("Bearer {t}");
        for credentials in [
            Credentials {
                cookie_header: Some(&cookie),
                ..Credentials::default()
            },
            Credentials {
                authorization: Some(&bearer),
                ..Credentials::default()
            },
            Credentials {
                cookie_header: Some(&cookie),
                authorization: Some(&bearer),
                ..Credentials::default()
            },
        ] {
            let caller = identify(credentials, &settings(true, true), NOW).unwrap();
            assert_eq!(caller.user.sub, "eval");
            // The downstream services get an equivalent claims header.
            let minted = caller.forwarded_claims.unwrap();
            assert_eq!(AuthUser::from_claims(&minted).unwrap(), caller.user);
            // Without the secret the token is not even looked at.
            assert_eq!(
                reason(credentials, &settings(true, false)),
                RefusalReason::Missing
            );
        }
    }

    #[test]
    fn bad_dev_tokens_are_refused() {
        let s = settings(true, true);
        let bearer = |t: String| format!("Bearer {t}");
        let claims = json!({"sub": "eval", "roles": ["admin"], "exp": NOW + 300.0});
        let unsigned = {
            let h = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#);
            let p = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
            format!("{h}.{p}.")
        };
        let rs256 = {
            let h = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(r#"{"alg":"RS256","typ":"JWT"}"#);
            let p = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
            format!("{h}.{p}.c2lnbmF0dXJl")
        };
        let cases = [
            (unsigned, RefusalReason::Token(JwtError::Algorithm)),
            (rs256, RefusalReason::Token(JwtError::Algorithm)),
            (
                token(claims.clone(), "wrong-secret"),
                RefusalReason::Token(JwtError::Signature),
            ),
            (
                token(json!({"sub": "eval", "exp": NOW - 3600.0}), SECRET),
                RefusalReason::Token(JwtError::Expired),
            ),
            (
                token(json!({"sub": "eval", "roles": ["admin"]}), SECRET),
                RefusalReason::Token(JwtError::MissingExpiry),
            ),
        ];
        for (t, expected) in cases {
            let value = bearer(t);
            let credentials = Credentials {
                authorization: Some(&value),
                ..Credentials::default()
            };
            assert_eq!(reason(credentials, &s), expected);
        }
        // Two different tokens: which one is meant is not guessed.
        let cookie = format!("{TOKEN_COOKIE}={}", valid_token());
        let other = bearer(token(
            json!({"sub": "other", "roles": ["admin"], "exp": NOW + 300.0}),
            SECRET,
        ));
        let both = Credentials {
            cookie_header: Some(&cookie),
            authorization: Some(&other),
            ..Credentials::default()
        };
        assert_eq!(reason(both, &s), RefusalReason::ConflictingTokens);
    }

    #[test]
    fn nothing_presented_is_anonymous_only_when_auth_is_off() {
        let none = Credentials::default();
        assert_eq!(
            identify(none, &settings(false, false), NOW).unwrap(),
            Caller::anonymous()
        );
        assert_eq!(
            identify(none, &settings(true, true), NOW),
            Err(AuthError::Unauthenticated)
        );
        // A Basic header is not a bearer token.
        let basic = Credentials {
            authorization: Some("Basic dXNlcjpwYXNz"),
            ..Credentials::default()
        };
        assert_eq!(reason(basic, &settings(true, true)), RefusalReason::Missing);
    }
}
