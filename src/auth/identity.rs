//! Who is asking, from what a request carries. One identity per request, chosen in this order
//! ([`plan`], pure):
//!
//! 1. `x-gateway-claims` present and trusted (`TRUST_GATEWAY_HEADER`, on by default unless OIDC
//!    is configured): its claims
//!    (the gateway verified them), and nothing else; an `Authorization` header or cookie the
//!    gateway passed along is ignored. A header that is present but unusable (too large, not
//!    base64 JSON, no subject, expired) is refused; it never falls through to the next path.
//!    With the header not trusted, a request carrying it is refused.
//! 2. A bearer token (the `Authorization` header, or the `authentication_token` cookie): HS256
//!    with `EVAL_JWT_SECRET` set is a development token; otherwise, with `OIDC_JWKS_URL` set, an
//!    OIDC token whose `kid` chooses a key of that JWKS. When both the cookie and the header
//!    carry a token they must be the same token.
//! 3. Nothing presented and `REQUIRE_AUTH=false`: the anonymous caller.
//!
//! Two credentials of one kind (two claims or `Authorization` headers, two token cookies) are
//! refused. Every refusal is the same [`AuthError::Unauthenticated`] to the caller (HTTP 401
//! without detail); the reason is only logged. Pure: the clock and the OIDC key are passed in.

use super::jwt::{read_header, verify_hs256, JwtError, LEEWAY_SECONDS};
use super::oidc::{verify_bearer, OidcSettings, VerifyingKey};
use super::{AuthUser, ClaimsError};
use base64::Engine;

/// The cookie the development token travels in.
pub const TOKEN_COOKIE: &str = "authentication_token";

/// Header values longer than this are refused before parsing.
const MAX_HEADER_BYTES: usize = 16 * 1024;

/// What a request presented, as raw header values. A header sent twice is refused before this
/// is built; several `Cookie` headers are joined.
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
    /// `TRUST_GATEWAY_HEADER`: read `x-gateway-claims` (only behind a gateway that sets it).
    pub trust_gateway_header: bool,
    /// `OIDC_*`: verify bearer tokens against the identity provider's JWKS.
    pub oidc: Option<OidcSettings>,
}

impl IdentitySettings {
    pub fn from_config(access: &crate::config::AccessConfig) -> IdentitySettings {
        IdentitySettings {
            require_auth: access.require_auth,
            jwt_secret: access.eval_jwt_secret.clone(),
            trust_gateway_header: access.trust_gateway_header,
            oidc: access.oidc.clone(),
        }
    }

    /// The identity paths enabled, in words (for `doctor` and the start-up log).
    pub fn describe(&self) -> String {
        let mut modes = Vec::new();
        if self.trust_gateway_header {
            modes.push("gateway header (x-gateway-claims)".to_string());
        }
        if let Some(oidc) = &self.oidc {
            modes.push(format!("OIDC bearer (JWKS {})", oidc.jwks_url));
        }
        if self.jwt_secret.is_some() {
            modes.push("dev token (HS256)".to_string());
        }
        if !self.require_auth {
            modes.push("anonymous when nothing is presented".to_string());
        }
        if modes.is_empty() {
            "none: every request is refused".to_string()
        } else {
            modes.join(", ")
        }
    }
}

/// An identified caller, with the claims header to forward to the downstream services
/// (`None` for the anonymous caller, who may not call them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: AuthUser,
    pub forwarded_claims: Option<String>,
}

impl Caller {
    /// A caller whose claims header is minted from the user (the token and CLI paths).
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

/// Why a request was refused; for the log only (never the token or the claims).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefusalReason {
    #[error("claims header: {0}")]
    Claims(#[from] ClaimsError),
    #[error("claims header has expired")]
    ClaimsExpired,
    #[error("claims header sent, but TRUST_GATEWAY_HEADER is off")]
    UntrustedClaimsHeader,
    #[error("a header is too large")]
    TooLarge,
    #[error("token: {0}")]
    Token(#[from] JwtError),
    #[error("the cookie and the Authorization header carry different tokens")]
    ConflictingTokens,
    #[error("the same credential is sent twice")]
    Duplicate,
    #[error("no credentials")]
    Missing,
    #[error("a bearer token, but neither EVAL_JWT_SECRET nor OIDC_JWKS_URL is set")]
    TokensNotAccepted,
    #[error("OIDC token without a kid")]
    MissingKeyId,
    #[error("OIDC token signed by a key not in the JWKS")]
    UnknownKey,
}

/// Which path identifies a request, before any key is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan<'a> {
    Gateway(&'a str),
    DevToken(&'a str),
    /// Needs the JWKS key named `kid`.
    Oidc {
        token: &'a str,
        kid: String,
    },
    Anonymous,
}

/// Chooses the identity path of a request (see the module doc for the order).
pub fn plan<'a>(
    credentials: Credentials<'a>,
    settings: &IdentitySettings,
) -> Result<Plan<'a>, RefusalReason> {
    let too_large = |value: Option<&str>| value.is_some_and(|v| v.len() > MAX_HEADER_BYTES);
    if too_large(credentials.claims_header)
        || too_large(credentials.cookie_header)
        || too_large(credentials.authorization)
    {
        return Err(RefusalReason::TooLarge);
    }
    if let Some(header) = credentials.claims_header {
        if !settings.trust_gateway_header {
            return Err(RefusalReason::UntrustedClaimsHeader);
        }
        return Ok(Plan::Gateway(header));
    }
    let Some(token) = presented_token(credentials)? else {
        return if settings.require_auth {
            Err(RefusalReason::Missing)
        } else {
            Ok(Plan::Anonymous)
        };
    };
    let header = read_header(token)?;
    let dev = settings.jwt_secret.is_some();
    match (&settings.oidc, header.alg.as_str()) {
        (_, "HS256") if dev => Ok(Plan::DevToken(token)),
        (Some(_), _) => Ok(Plan::Oidc {
            token,
            kid: header.kid.ok_or(RefusalReason::MissingKeyId)?,
        }),
        (None, _) if dev => Ok(Plan::DevToken(token)),
        (None, _) => Err(RefusalReason::TokensNotAccepted),
    }
}

/// The caller of a planned request at `now` (seconds since the epoch). `oidc_key` is the JWKS
/// key of an [`Plan::Oidc`] plan (`None`: the set holds no such key).
pub fn finish(
    plan: Plan<'_>,
    settings: &IdentitySettings,
    oidc_key: Option<&VerifyingKey>,
    now: f64,
) -> Result<Caller, RefusalReason> {
    match plan {
        Plan::Gateway(header) => from_claims_header(header, now),
        Plan::DevToken(token) => {
            let secret = settings
                .jwt_secret
                .as_ref()
                .ok_or(RefusalReason::TokensNotAccepted)?;
            Ok(Caller::minted(verify_hs256(token, secret.as_bytes(), now)?))
        }
        Plan::Oidc { token, .. } => {
            let oidc = settings
                .oidc
                .as_ref()
                .ok_or(RefusalReason::TokensNotAccepted)?;
            let key = oidc_key.ok_or(RefusalReason::UnknownKey)?;
            Ok(Caller::minted(verify_bearer(token, key, oidc, now)?))
        }
        Plan::Anonymous => Ok(Caller::anonymous()),
    }
}

/// The caller of a request at `now` when no JWKS key is involved (an OIDC token is refused
/// here: the server looks its key up and calls [`finish`]), with the reason of a refusal.
pub fn identify_with_reason(
    credentials: Credentials<'_>,
    settings: &IdentitySettings,
    now: f64,
) -> Result<Caller, RefusalReason> {
    finish(plan(credentials, settings)?, settings, None, now)
}

fn from_claims_header(header: &str, now: f64) -> Result<Caller, RefusalReason> {
    let (user, expiry) = AuthUser::from_claims_with_expiry(header)?;
    if expiry.is_some_and(|exp| exp + LEEWAY_SECONDS <= now) {
        return Err(RefusalReason::ClaimsExpired);
    }
    Ok(Caller::forwarding(user, header))
}

/// The token from the cookie and/or the bearer header; both present must agree, and the
/// cookie may carry one token only.
fn presented_token<'a>(credentials: Credentials<'a>) -> Result<Option<&'a str>, RefusalReason> {
    let from_cookie = match credentials.cookie_header {
        Some(header) => cookie_token(header)?,
        None => None,
    };
    let from_bearer = credentials.authorization.and_then(bearer_token);
    match (from_cookie, from_bearer) {
        (Some(a), Some(b)) if a != b => Err(RefusalReason::ConflictingTokens),
        (Some(token), _) | (None, Some(token)) => Ok(Some(token)),
        (None, None) => Ok(None),
    }
}

fn cookie_token(cookie_header: &str) -> Result<Option<&str>, RefusalReason> {
    let mut tokens = cookie_header.split(';').filter_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name.trim() == TOKEN_COOKIE).then(|| value.trim().trim_matches('"'))
    });
    let first = tokens.next();
    if tokens.next().is_some() {
        return Err(RefusalReason::Duplicate);
    }
    Ok(first)
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

    /// What a caller sees: one opaque refusal whatever the reason.
    fn identify(
        credentials: Credentials<'_>,
        settings: &IdentitySettings,
        now: f64,
    ) -> Result<Caller, AuthError> {
        identify_with_reason(credentials, settings, now).map_err(|_| AuthError::Unauthenticated)
    }

    fn settings(require_auth: bool, secret: bool) -> IdentitySettings {
        IdentitySettings {
            require_auth,
            jwt_secret: secret.then(|| SECRET.to_string()),
            trust_gateway_header: true,
            oidc: None,
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
        // A trusted claims header wins over a token beside it: the token is not looked at, and an
        // unusable header is refused rather than falling through to the token.
        let both = Credentials {
            claims_header: Some("%%%not-base64%%%"),
            authorization: Some(bearer.as_str()),
            ..Credentials::default()
        };
        assert_eq!(
            reason(both, &s),
            RefusalReason::Claims(ClaimsError::Malformed)
        );
        let cookie = format!("{TOKEN_COOKIE}={}", valid_token());
        let with_cookie = Credentials {
            claims_header: Some(r#"{"sub":"ana"}"#),
            cookie_header: Some(cookie.as_str()),
            authorization: Some(bearer.as_str()),
        };
        assert_eq!(identify(with_cookie, &s, NOW).unwrap().user.sub, "ana");
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
            // Without the secret (and no OIDC) a token is refused, even where anonymous callers
            // are allowed: whoever sent it meant to be someone.
            for require_auth in [true, false] {
                assert_eq!(
                    reason(credentials, &settings(require_auth, false)),
                    RefusalReason::TokensNotAccepted
                );
            }
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

    #[test]
    fn an_untrusted_claims_header_is_refused_even_beside_a_good_token() {
        let s = IdentitySettings {
            trust_gateway_header: false,
            ..settings(true, true)
        };
        let bearer = format!("Bearer {}", valid_token());
        let credentials = Credentials {
            claims_header: Some(r#"{"sub":"root","roles":["admin"]}"#),
            authorization: Some(&bearer),
            ..Credentials::default()
        };
        assert_eq!(
            reason(credentials, &s),
            RefusalReason::UntrustedClaimsHeader
        );
        let alone = Credentials {
            authorization: Some(&bearer),
            ..Credentials::default()
        };
        assert_eq!(identify(alone, &s, NOW).unwrap().user.sub, "eval");
    }

    #[test]
    fn two_token_cookies_are_refused_not_resolved_by_order() {
        let t = valid_token();
        let cookie = format!("{TOKEN_COOKIE}={t}; theme=dark; {TOKEN_COOKIE}={t}");
        let credentials = Credentials {
            cookie_header: Some(&cookie),
            ..Credentials::default()
        };
        assert_eq!(
            reason(credentials, &settings(true, true)),
            RefusalReason::Duplicate
        );
    }

    #[test]
    fn bearer_tokens_are_planned_by_algorithm_and_configuration() {
        let oidc = OidcSettings {
            jwks_url: "http://127.0.0.1:1/jwks".parse().unwrap(),
            issuer: "https://login.example".into(),
            audience: "agent".into(),
        };
        let rs256 = |kid: Option<&str>| {
            let header = match kid {
                Some(kid) => format!(r#"{{"alg":"RS256","kid":"{kid}"}}"#),
                None => r#"{"alg":"RS256"}"#.to_string(),
            };
            let b64url = |t: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(t);
            format!(
                "Bearer {}.{}.c2ln",
                b64url(&header),
                b64url(r#"{"sub":"x"}"#)
            )
        };
        let with = |authorization: &str, settings: &IdentitySettings| {
            let credentials = Credentials {
                authorization: Some(authorization),
                ..Credentials::default()
            };
            plan(credentials, settings).map(|p| match p {
                Plan::Oidc { kid, .. } => format!("oidc {kid}"),
                Plan::DevToken(_) => "dev".to_string(),
                other => format!("{other:?}"),
            })
        };
        let both = IdentitySettings {
            oidc: Some(oidc.clone()),
            ..settings(true, true)
        };
        let oidc_only = IdentitySettings {
            oidc: Some(oidc),
            ..settings(true, false)
        };
        let dev = format!("Bearer {}", valid_token());
        assert_eq!(with(&dev, &both), Ok("dev".to_string()));
        assert_eq!(with(&rs256(Some("k1")), &both), Ok("oidc k1".to_string()));
        assert_eq!(
            with(&rs256(Some("k1")), &oidc_only),
            Ok("oidc k1".to_string())
        );
        // An HS256 token without the dev secret is an OIDC token, refused later for its alg.
        assert_eq!(with(&dev, &oidc_only), Err(RefusalReason::MissingKeyId));
        assert_eq!(
            with(&rs256(None), &oidc_only),
            Err(RefusalReason::MissingKeyId)
        );
        assert_eq!(
            with(&rs256(Some("k1")), &settings(true, false)),
            Err(RefusalReason::TokensNotAccepted)
        );
        // An OIDC plan with no key held is refused as an unknown key.
        let bearer = rs256(Some("k1"));
        let planned = plan(
            Credentials {
                authorization: Some(&bearer),
                ..Credentials::default()
            },
            &oidc_only,
        )
        .unwrap();
        assert_eq!(
            finish(planned, &oidc_only, None, NOW),
            Err(RefusalReason::UnknownKey)
        );
    }
}
