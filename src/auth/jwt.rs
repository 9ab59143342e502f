//! The development token: an HS256 JWT signed with `EVAL_JWT_SECRET`, carrying flat
//! `{sub, roles, domains, exp}` claims. Only HS256 is accepted (the algorithm is never taken
//! from the token to pick a key), `exp` is required, and the signature is compared in constant
//! time. Pure: the caller passes the clock.

use super::{AuthUser, ClaimsError};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

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
    #[error("the token is not signed with HS256")]
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
    #[error("the token's claims are unusable: {0}")]
    Claims(#[from] ClaimsError),
}

#[derive(serde::Deserialize)]
struct Header {
    alg: Option<String>,
    typ: Option<String>,
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

/// Verifies `token` against `secret` at `now` (seconds since the epoch) and reads its caller.
pub fn verify_hs256(token: &str, secret: &[u8], now: f64) -> Result<AuthUser, JwtError> {
    let token = token.trim();
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JwtError::TooLarge);
    }
    let mut parts = token.split('.');
    let (Some(header_b64), Some(claims_b64), Some(signature_b64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed);
    };
    let header: Header = decode_json(header_b64)?;
    if header.alg.as_deref() != Some("HS256") || header.crit.is_some() {
        return Err(JwtError::Algorithm);
    }
    if header
        .typ
        .as_deref()
        .is_some_and(|t| !t.eq_ignore_ascii_case("JWT"))
    {
        return Err(JwtError::WrongRecipient);
    }
    let signature = URL_SAFE_NO_PAD
        .decode(signature_b64)
        .map_err(|_| JwtError::Malformed)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).map_err(|_| JwtError::Signature)?;
    mac.update(header_b64.as_bytes());
    mac.update(b".");
    mac.update(claims_b64.as_bytes());
    mac.verify_slice(&signature)
        .map_err(|_| JwtError::Signature)?;

    let claims_json = URL_SAFE_NO_PAD
        .decode(claims_b64)
        .map_err(|_| JwtError::Malformed)?;
    let times: RegisteredClaims =
        serde_json::from_slice(&claims_json).map_err(|_| JwtError::Malformed)?;
    check_recipient(&times)?;
    let exp = times
        .exp
        .and_then(|n| n.as_f64())
        .ok_or(JwtError::MissingExpiry)?;
    if exp + LEEWAY_SECONDS <= now {
        return Err(JwtError::Expired);
    }
    let issued = times.iat.and_then(|n| n.as_f64()).unwrap_or(now);
    if exp - now.min(issued) > MAX_LIFETIME_SECONDS + LEEWAY_SECONDS {
        return Err(JwtError::TooLongLived);
    }
    if let Some(nbf) = times.nbf.and_then(|n| n.as_f64()) {
        if nbf - LEEWAY_SECONDS > now {
            return Err(JwtError::NotYetValid);
        }
    }
    let text = std::str::from_utf8(&claims_json).map_err(|_| JwtError::Malformed)?;
    Ok(AuthUser::from_claims(text)?)
}

/// `iss` and `aud` may be left out; when present they must name this service.
fn check_recipient(claims: &RegisteredClaims) -> Result<(), JwtError> {
    let names = |value: &serde_json::Value, expected: &str| match value {
        serde_json::Value::String(s) => s == expected,
        serde_json::Value::Array(items) => items.iter().any(|i| i.as_str() == Some(expected)),
        _ => false,
    };
    let issuer_ok = claims
        .iss
        .as_ref()
        .is_none_or(|v| names(v, DEV_TOKEN_ISSUER));
    let audience_ok = claims
        .aud
        .as_ref()
        .is_none_or(|v| names(v, DEV_TOKEN_AUDIENCE));
    if issuer_ok && audience_ok {
        Ok(())
    } else {
        Err(JwtError::WrongRecipient)
    }
}

/// Signs `claims` as an HS256 JWT: for tests and for evaluation runs that mint their own token.
pub fn sign_hs256(claims: &serde_json::Value, secret: &[u8]) -> String {
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(header.as_bytes());
    mac.update(b".");
    mac.update(payload.as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{header}.{payload}.{signature}")
}

fn decode_json<T: serde::de::DeserializeOwned>(part: &str) -> Result<T, JwtError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| JwtError::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| JwtError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let typed = with_header(
            r#"{"alg":"HS256","typ":"at+jwt"}"#,
            &claims(Some(NOW + 60.0)),
            "c2ln",
        );
        assert_eq!(
            verify_hs256(&typed, SECRET, NOW),
            Err(JwtError::WrongRecipient)
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
    fn a_tampered_payload_fails_the_signature() {
        let token = sign_hs256(&claims(Some(NOW + 60.0)), SECRET);
        let parts: Vec<&str> = token.split('.').collect();
        let admin = URL_SAFE_NO_PAD
            .encode(json!({"sub": "eval", "roles": ["admin"], "exp": NOW + 60.0}).to_string());
        let forged = format!("{}.{admin}.{}", parts[0], parts[2]);
        assert_eq!(verify_hs256(&forged, SECRET, NOW), Err(JwtError::Signature));
    }
}
