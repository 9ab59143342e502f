//! Signed tokens, through the `jsonwebtoken` crate: the rules every accepted JWT follows
//! ([`TokenRules`]: one allowed algorithm family, `exp` required, `nbf` honoured, a small leeway,
//! issuer and audience when configured) and the development token (HS256 with
//! `EVAL_JWT_SECRET`, flat `{sub, roles, domains, exp}` claims). The algorithm is never taken
//! from the token to pick a key. Pure: the caller passes the clock, and the crate's own time
//! checks are off so that one clock rules every path.

use super::strict_json::{self, StrictJsonError};
use super::{AuthUser, ClaimsError};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Validation};

/// Tokens longer than this are refused before any decoding.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// Clock skew tolerated on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECONDS: f64 = 30.0;

/// Longest life of a development token: its `exp` at most this far ahead (of now, and of its
/// `iat` when it has one).
pub const MAX_LIFETIME_SECONDS: f64 = 24.0 * 3600.0;

/// `iss` and `aud` of a development token, when it names them.
pub const DEV_TOKEN_ISSUER: &str = "crowdvision-agent";
pub const DEV_TOKEN_AUDIENCE: &str = "crowdvision-agent";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    #[error("the token is too large")]
    TooLarge,
    #[error("the token is not a JWT")]
    Malformed,
    #[error("the token is not signed with an accepted algorithm")]
    Algorithm,
    #[error("the token's signature does not match")]
    Signature,
    #[error("the token has no expiry")]
    MissingExpiry,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token lives longer than 24 hours")]
    TooLongLived,
    #[error("the token's type, issuer or audience is not this service's")]
    WrongRecipient,
    #[error("the token's header names the key `{0}` twice")]
    RepeatedKey(String),
    #[error("the token's claims are unusable: {0}")]
    Claims(#[from] ClaimsError),
}

/// What a token must satisfy besides its signature.
#[derive(Debug, Clone)]
pub struct TokenRules<'a> {
    pub algorithms: &'a [Algorithm],
    /// `Some`: `iss` must equal it. `None`: `iss` may be absent, or must equal `default_name`.
    pub issuer: Option<&'a str>,
    /// `Some`: `aud` must contain it. `None`: as for the issuer.
    pub audience: Option<&'a str>,
    /// The name an unconfigured `iss`/`aud` may carry (the dev token's own).
    pub default_name: Option<&'a str>,
    /// Longest life accepted (`exp` ahead of now and of `iat`), if bounded.
    pub max_lifetime: Option<f64>,
}

/// The header fields read before verification: which key and which algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenHeader {
    pub alg: String,
    pub kid: Option<String>,
}

#[derive(serde::Deserialize)]
struct RawHeader {
    alg: Option<String>,
    typ: Option<String>,
    kid: Option<String>,
    crit: Option<serde_json::Value>,
}

/// The registered claims checked here; the caller's own are read by `AuthUser::from_claims`.
#[derive(serde::Deserialize)]
struct RegisteredClaims {
    exp: Option<serde_json::Number>,
    nbf: Option<serde_json::Number>,
    iat: Option<serde_json::Number>,
    iss: Option<serde_json::Value>,
    aud: Option<serde_json::Value>,
}

/// Reads a token's header without trusting it: refuses oversized tokens, `crit` extensions, a
/// `typ` other than JWT or `at+jwt`, and a header that names a key twice.
pub fn read_header(token: &str) -> Result<TokenHeader, JwtError> {
    let token = token.trim();
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JwtError::TooLarge);
    }
    let mut parts = token.split('.');
    let (Some(header_b64), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed);
    };
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header_b64)
        .map_err(|_| JwtError::Malformed)?;
    let header: RawHeader =
        serde_json::from_value(strict_json::parse(&bytes).map_err(|error| match error {
            StrictJsonError::DuplicateKey(key) => JwtError::RepeatedKey(key),
            StrictJsonError::Malformed => JwtError::Malformed,
        })?)
        .map_err(|_| JwtError::Malformed)?;
    if header.crit.is_some() {
        return Err(JwtError::Algorithm);
    }
    if header.typ.as_deref().is_some_and(|typ| !accepted_type(typ)) {
        return Err(JwtError::WrongRecipient);
    }
    Ok(TokenHeader {
        alg: header.alg.ok_or(JwtError::Algorithm)?,
        kid: header.kid,
    })
}

/// A plain JWT, or an OAuth 2.0 access token (RFC 9068 `at+jwt`, also with its media-type
/// prefix).
fn accepted_type(typ: &str) -> bool {
    let typ = typ
        .strip_prefix("application/")
        .unwrap_or(typ)
        .to_ascii_lowercase();
    typ == "jwt" || typ == "at+jwt"
}

/// Verifies `token` with `key` under `rules` at `now` (seconds since the epoch) and reads its
/// caller from the claims (`memberships`, or `roles` and `domains`).
pub fn verify(
    token: &str,
    key: &DecodingKey,
    rules: &TokenRules<'_>,
    now: f64,
) -> Result<AuthUser, JwtError> {
    let token = token.trim();
    let header = read_header(token)?;
    let allowed = rules
        .algorithms
        .iter()
        .any(|alg| algorithm_name(*alg) == header.alg);
    if !allowed {
        return Err(JwtError::Algorithm);
    }
    let mut validation = Validation::new(rules.algorithms[0]);
    validation.algorithms = rules.algorithms.to_vec();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    jsonwebtoken::decode::<serde_json::Value>(token, key, &validation).map_err(
        |error| match error.kind() {
            ErrorKind::InvalidSignature => JwtError::Signature,
            ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => JwtError::Algorithm,
            _ => JwtError::Malformed,
        },
    )?;
    // The signature holds; the claims are read again from the signed bytes, strictly, since
    // the crate's own reading keeps the last of a repeated key.
    let claims = signed_claims(token)?;
    let registered: RegisteredClaims =
        serde_json::from_value(claims.clone()).map_err(|_| JwtError::Malformed)?;
    check_recipient(&registered, rules)?;
    check_times(&registered, rules.max_lifetime, now)?;
    Ok(AuthUser::from_claims_value(claims)?)
}

/// The payload of a token whose signature was checked, as strict JSON.
fn signed_claims(token: &str) -> Result<serde_json::Value, JwtError> {
    use base64::Engine;
    let payload = token.split('.').nth(1).ok_or(JwtError::Malformed)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| JwtError::Malformed)?;
    strict_json::parse(&bytes).map_err(|error| JwtError::Claims(error.into()))
}

/// The development token: HS256 with `secret`, issuer and audience absent or this service's,
/// at most a day long.
pub fn verify_hs256(token: &str, secret: &[u8], now: f64) -> Result<AuthUser, JwtError> {
    let rules = TokenRules {
        algorithms: &[Algorithm::HS256],
        issuer: None,
        audience: None,
        default_name: Some(DEV_TOKEN_ISSUER),
        max_lifetime: Some(MAX_LIFETIME_SECONDS),
    };
    verify(token, &DecodingKey::from_secret(secret), &rules, now)
}

fn algorithm_name(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::HS256 => "HS256",
        Algorithm::HS384 => "HS384",
        Algorithm::HS512 => "HS512",
        Algorithm::RS256 => "RS256",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::PS256 => "PS256",
        Algorithm::PS384 => "PS384",
        Algorithm::PS512 => "PS512",
        Algorithm::EdDSA => "EdDSA",
    }
}

fn check_times(
    claims: &RegisteredClaims,
    max_lifetime: Option<f64>,
    now: f64,
) -> Result<(), JwtError> {
    let exp = claims
        .exp
        .as_ref()
        .and_then(serde_json::Number::as_f64)
        .ok_or(JwtError::MissingExpiry)?;
    if exp + LEEWAY_SECONDS <= now {
        return Err(JwtError::Expired);
    }
    if let Some(limit) = max_lifetime {
        let issued = claims
            .iat
            .as_ref()
            .and_then(serde_json::Number::as_f64)
            .unwrap_or(now);
        if exp - now.min(issued) > limit + LEEWAY_SECONDS {
            return Err(JwtError::TooLongLived);
        }
    }
    if let Some(nbf) = claims.nbf.as_ref().and_then(serde_json::Number::as_f64) {
        if nbf - LEEWAY_SECONDS > now {
            return Err(JwtError::NotYetValid);
        }
    }
    Ok(())
}

/// A configured issuer must be the token's `iss`, a configured audience among its `aud`;
/// unconfigured, they may be left out or name `default_name`.
fn check_recipient(claims: &RegisteredClaims, rules: &TokenRules<'_>) -> Result<(), JwtError> {
    let names = |value: &serde_json::Value, expected: &str| match value {
        serde_json::Value::String(s) => s == expected,
        serde_json::Value::Array(items) => items.iter().any(|i| i.as_str() == Some(expected)),
        _ => false,
    };
    let matches = |value: Option<&serde_json::Value>, configured: Option<&str>| match configured {
        Some(expected) => value.is_some_and(|v| names(v, expected)),
        None => value.is_none_or(|v| rules.default_name.is_some_and(|d| names(v, d))),
    };
    let issuer_ok = match (rules.issuer, claims.iss.as_ref()) {
        // An issuer is one string, never a list.
        (Some(expected), Some(serde_json::Value::String(s))) => s == expected,
        (Some(_), _) => false,
        (None, value) => matches(value, None),
    };
    if issuer_ok && matches(claims.aud.as_ref(), rules.audience) {
        Ok(())
    } else {
        Err(JwtError::WrongRecipient)
    }
}

/// Signs `claims` as an HS256 JWT: for tests and for evaluation runs that mint their own token.
pub fn sign_hs256(claims: &serde_json::Value, secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret),
    )
    .expect("HS256 signs any JSON claims")
}

/// An HS256 token over the header and claims texts exactly as given, repeated keys and all: for
/// tests that must send what a careless or hostile issuer would.
pub fn sign_hs256_text(header: &str, claims: &str, secret: &[u8]) -> String {
    use base64::Engine;
    let encode = |text: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text);
    let message = format!("{}.{}", encode(header), encode(claims));
    let signature = jsonwebtoken::crypto::sign(
        message.as_bytes(),
        &EncodingKey::from_secret(secret),
        Algorithm::HS256,
    )
    .expect("HS256 signs any bytes");
    format!("{message}.{signature}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use serde_json::json;

    const SECRET: &[u8] = b"dev-secret";
    const NOW: f64 = 1_800_000_000.0;

    fn claims(exp: Option<f64>) -> serde_json::Value {
        let mut claims = json!({"sub": "eval", "roles": ["business_staff"], "domains": ["acme"]});
        if let Some(exp) = exp {
            claims["exp"] = json!(exp);
        }
        claims
    }

    fn with_header(header: &str, claims: &serde_json::Value, signature: &str) -> String {
        format!(
            "{}.{}.{signature}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        )
    }

    #[test]
    fn a_signed_token_reads_as_its_caller() {
        let token = sign_hs256(&claims(Some(NOW + 60.0)), SECRET);
        let user = verify_hs256(&token, SECRET, NOW).unwrap();
        assert_eq!(user.sub, "eval");
        assert_eq!(user.domains, ["acme"]);
        // Naming this service as issuer and audience, with a 24-hour life, is fine too.
        let named = json!({"sub": "e", "iat": NOW, "exp": NOW + MAX_LIFETIME_SECONDS,
            "iss": DEV_TOKEN_ISSUER, "aud": [DEV_TOKEN_AUDIENCE, "other"]});
        assert!(verify_hs256(&sign_hs256(&named, SECRET), SECRET, NOW).is_ok());
        // RFC 9068 access tokens are JWTs too; another type is not.
        let valid = claims(Some(NOW + 60.0)).to_string();
        for typ in ["JWT", "at+jwt", "application/at+jwt", "AT+JWT"] {
            let header = format!(r#"{{"alg":"HS256","typ":"{typ}"}}"#);
            let typed = sign_hs256_text(&header, &valid, SECRET);
            assert_eq!(
                verify_hs256(&typed, SECRET, NOW).unwrap().sub,
                "eval",
                "{typ}"
            );
        }
        let other = sign_hs256_text(r#"{"alg":"HS256","typ":"JOSE+JSON"}"#, &valid, SECRET);
        assert_eq!(
            verify_hs256(&other, SECRET, NOW),
            Err(JwtError::WrongRecipient)
        );
    }

    #[test]
    fn a_key_named_twice_in_the_header_or_the_claims_is_refused() {
        let exp = NOW + 60.0;
        let promoted = format!(
            r#"{{"sub":"eve","roles":["standard_customer"],"roles":["admin"],"exp":{exp}}}"#
        );
        let token = sign_hs256_text(r#"{"alg":"HS256"}"#, &promoted, SECRET);
        assert_eq!(
            verify_hs256(&token, SECRET, NOW),
            Err(JwtError::Claims(ClaimsError::RepeatedKey("roles".into())))
        );
        let nested = format!(
            r#"{{"sub":"eve","memberships":[{{"domain":"acme","role":"standard_customer","role":"admin"}}],"exp":{exp}}}"#
        );
        let token = sign_hs256_text(r#"{"alg":"HS256"}"#, &nested, SECRET);
        assert_eq!(
            verify_hs256(&token, SECRET, NOW),
            Err(JwtError::Claims(ClaimsError::RepeatedKey("role".into())))
        );
        let valid = claims(Some(exp)).to_string();
        let header = sign_hs256_text(r#"{"alg":"HS256","alg":"none"}"#, &valid, SECRET);
        assert_eq!(
            verify_hs256(&header, SECRET, NOW),
            Err(JwtError::RepeatedKey("alg".into()))
        );
    }

    #[test]
    fn every_bad_token_is_refused_for_its_reason() {
        let valid = claims(Some(NOW + 60.0));
        let cases = [
            (sign_hs256(&valid, b"other-secret"), JwtError::Signature),
            (
                sign_hs256(&claims(Some(NOW - 31.0)), SECRET),
                JwtError::Expired,
            ),
            (sign_hs256(&claims(None), SECRET), JwtError::MissingExpiry),
            (
                with_header(r#"{"alg":"none"}"#, &valid, ""),
                JwtError::Algorithm,
            ),
            (
                with_header(r#"{"alg":"RS256"}"#, &valid, "c2ln"),
                JwtError::Algorithm,
            ),
            (
                with_header(r#"{"alg":"HS256","crit":["x"]}"#, &valid, "c2ln"),
                JwtError::Algorithm,
            ),
            ("a.b".to_string(), JwtError::Malformed),
            ("a.b.c.d".to_string(), JwtError::Malformed),
            ("!!!.???.***".to_string(), JwtError::Malformed),
            ("x".repeat(MAX_TOKEN_BYTES + 1), JwtError::TooLarge),
            (
                sign_hs256(&claims(Some(NOW + 2.0 * MAX_LIFETIME_SECONDS)), SECRET),
                JwtError::TooLongLived,
            ),
            (
                sign_hs256(
                    &json!({"sub": "e", "exp": NOW + 60.0, "iat": NOW - MAX_LIFETIME_SECONDS * 3.0}),
                    SECRET,
                ),
                JwtError::TooLongLived,
            ),
            (
                sign_hs256(
                    &json!({"sub": "e", "exp": NOW + 60.0, "iss": "someone-else"}),
                    SECRET,
                ),
                JwtError::WrongRecipient,
            ),
            (
                sign_hs256(
                    &json!({"sub": "e", "exp": NOW + 60.0, "aud": ["billing"]}),
                    SECRET,
                ),
                JwtError::WrongRecipient,
            ),
        ];
        for (token, expected) in cases {
            assert_eq!(
                verify_hs256(&token, SECRET, NOW),
                Err(expected.clone()),
                "{expected}"
            );
        }
        let mut future = claims(Some(NOW + 600.0));
        future["nbf"] = json!(NOW + 300.0);
        assert_eq!(
            verify_hs256(&sign_hs256(&future, SECRET), SECRET, NOW),
            Err(JwtError::NotYetValid)
        );
    }

    #[test]
    fn expiry_within_the_leeway_is_accepted() {
        let token = sign_hs256(&claims(Some(NOW - 10.0)), SECRET);
        assert!(verify_hs256(&token, SECRET, NOW).is_ok());
    }

    #[test]
    fn a_configured_issuer_and_audience_are_required() {
        let rules = TokenRules {
            algorithms: &[Algorithm::HS256],
            issuer: Some("https://login.example"),
            audience: Some("agent"),
            default_name: None,
            max_lifetime: None,
        };
        let key = DecodingKey::from_secret(SECRET);
        let token = |extra: serde_json::Value| {
            let mut c = claims(Some(NOW + 60.0));
            c.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            sign_hs256(&c, SECRET)
        };
        let good = token(json!({"iss": "https://login.example", "aud": ["x", "agent"]}));
        assert_eq!(verify(&good, &key, &rules, NOW).unwrap().sub, "eval");
        for bad in [
            json!({"aud": "agent"}),
            json!({"iss": "https://evil.example", "aud": "agent"}),
            json!({"iss": ["https://login.example"], "aud": "agent"}),
            json!({"iss": "https://login.example"}),
            json!({"iss": "https://login.example", "aud": "other"}),
        ] {
            assert_eq!(
                verify(&token(bad.clone()), &key, &rules, NOW),
                Err(JwtError::WrongRecipient),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_tampered_payload_fails_the_signature() {
        let token = sign_hs256(&claims(Some(NOW + 60.0)), SECRET);
        let parts: Vec<&str> = token.split('.').collect();
        let admin = URL_SAFE_NO_PAD
            .encode(json!({"sub": "eval", "roles": ["admin"], "exp": NOW + 60.0}).to_string());
        let forged = format!("{}.{admin}.{}", parts[0], parts[2]);
        assert_eq!(verify_hs256(&forged, SECRET, NOW), Err(JwtError::Signature));
    }
}
