//! OIDC bearer tokens, the pure half: a JWKS document read into the keys this service accepts
//! ([`KeySet`]: RS256 and ES256 signing keys with a `kid`, within size and count bounds), and a
//! token verified against one of them with the deployment's issuer and audience. Fetching and
//! caching the JWKS is [`super::jwks`]'s job.
//!
//! Claims map to the caller exactly as the gateway's do: `sub`, then `memberships`
//! (`[{domain, role}]`) and/or flat `roles` and `domains` lists.

use super::jwt::{self, JwtError, TokenRules};
use super::strict_json::{self, StrictJsonError};
use super::AuthUser;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use std::collections::HashMap;

/// A JWKS document larger than this is refused whole (real ones are a few KiB).
pub const MAX_JWKS_BYTES: usize = 256 * 1024;

/// A JWKS with more keys than this is refused whole: no provider rotates through more.
pub const MAX_JWKS_KEYS: usize = 64;

pub use crate::config::OidcSettings;

/// One accepted key and the algorithm it verifies.
#[derive(Clone)]
pub struct VerifyingKey {
    pub key: DecodingKey,
    pub algorithm: Algorithm,
}

/// The usable keys of one JWKS document, by `kid`.
#[derive(Clone, Default)]
pub struct KeySet {
    keys: HashMap<String, VerifyingKey>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwksError {
    #[error("the JWKS is larger than {MAX_JWKS_BYTES} bytes")]
    TooLarge,
    #[error("the JWKS is not a JSON object with a `keys` list")]
    Malformed,
    #[error("the JWKS names the key `{0}` twice in one object")]
    RepeatedKey(String),
    #[error("the JWKS has {0} keys, more than {MAX_JWKS_KEYS}")]
    TooManyKeys(usize),
    #[error("the JWKS has no RS256 or ES256 signing key with a kid")]
    NoUsableKey,
}

#[derive(serde::Deserialize)]
struct Document {
    keys: Vec<serde_json::Value>,
}

impl KeySet {
    /// Reads a JWKS document. Keys of other types, other algorithms, encryption keys and keys
    /// without a `kid` are skipped; a document with none left is refused.
    pub fn parse(body: &[u8]) -> Result<KeySet, JwksError> {
        if body.len() > MAX_JWKS_BYTES {
            return Err(JwksError::TooLarge);
        }
        let value = strict_json::parse(body).map_err(|error| match error {
            StrictJsonError::DuplicateKey(key) => JwksError::RepeatedKey(key),
            StrictJsonError::Malformed => JwksError::Malformed,
        })?;
        let document: Document = serde_json::from_value(value).map_err(|_| JwksError::Malformed)?;
        if document.keys.len() > MAX_JWKS_KEYS {
            return Err(JwksError::TooManyKeys(document.keys.len()));
        }
        let keys: HashMap<String, VerifyingKey> = document
            .keys
            .into_iter()
            .filter_map(|value| serde_json::from_value::<Jwk>(value).ok())
            .filter_map(|jwk| Some((jwk.common.key_id.clone()?, usable_key(&jwk)?)))
            .collect();
        if keys.is_empty() {
            return Err(JwksError::NoUsableKey);
        }
        Ok(KeySet { keys })
    }

    pub fn get(&self, kid: &str) -> Option<&VerifyingKey> {
        self.keys.get(kid)
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// An RSA key for RS256 or a P-256 key for ES256, meant for signatures.
fn usable_key(jwk: &Jwk) -> Option<VerifyingKey> {
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return None;
    }
    let algorithm = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => {
            Algorithm::ES256
        }
        _ => return None,
    };
    let declared_ok = match jwk.common.key_algorithm {
        None => true,
        Some(KeyAlgorithm::RS256) => algorithm == Algorithm::RS256,
        Some(KeyAlgorithm::ES256) => algorithm == Algorithm::ES256,
        Some(_) => false,
    };
    if !declared_ok {
        return None;
    }
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(VerifyingKey { key, algorithm })
}

/// Verifies an OIDC bearer token with the key its `kid` chose, at `now`.
pub fn verify_bearer(
    token: &str,
    key: &VerifyingKey,
    settings: &OidcSettings,
    now: f64,
) -> Result<AuthUser, JwtError> {
    let rules = TokenRules {
        algorithms: std::slice::from_ref(&key.algorithm),
        issuer: Some(&settings.issuer),
        audience: Some(&settings.audience),
        default_name: None,
        max_lifetime: None,
    };
    jwt::verify(token, &key.key, &rules, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rsa_jwk(kid: &str) -> serde_json::Value {
        // A real 2048-bit modulus is not needed to test the reading: any base64url integer is
        // accepted as RSA components.
        json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": "sXchDaQebSXZ", "e": "AQAB"})
    }

    #[test]
    fn keys_are_read_by_kid_and_unusable_ones_skipped() {
        let body = json!({"keys": [
            rsa_jwk("a"),
            {"kty": "RSA", "n": "sXch", "e": "AQAB"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": "sXch", "e": "AQAB"},
            {"kty": "RSA", "kid": "ps", "alg": "PS256", "n": "sXch", "e": "AQAB"},
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "weird", "kid": "w"},
        ]});
        let set = KeySet::parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(set.len(), 1);
        assert_eq!(set.get("a").unwrap().algorithm, Algorithm::RS256);
        assert!(set.get("secret").is_none() && set.get("enc").is_none());
    }

    #[test]
    fn oversized_crowded_empty_or_non_json_documents_are_refused() {
        let many: Vec<_> = (0..10_000).map(|i| rsa_jwk(&i.to_string())).collect();
        let many = json!({ "keys": many }).to_string();
        assert_eq!(
            KeySet::parse(many.as_bytes()).err(),
            Some(if many.len() > MAX_JWKS_BYTES {
                JwksError::TooLarge
            } else {
                JwksError::TooManyKeys(10_000)
            })
        );
        let few_but_too_many: Vec<_> = (0..MAX_JWKS_KEYS + 1)
            .map(|i| rsa_jwk(&i.to_string()))
            .collect();
        let body = json!({ "keys": few_but_too_many }).to_string();
        assert_eq!(
            KeySet::parse(body.as_bytes()).err(),
            Some(JwksError::TooManyKeys(MAX_JWKS_KEYS + 1))
        );
        assert_eq!(
            KeySet::parse(b"<html>login</html>").err(),
            Some(JwksError::Malformed)
        );
        let twice =
            br#"{"keys":[{"kty":"RSA","kid":"a","kid":"b","alg":"RS256","n":"sXch","e":"AQAB"}]}"#;
        assert_eq!(
            KeySet::parse(twice).err(),
            Some(JwksError::RepeatedKey("kid".into()))
        );
        assert_eq!(
            KeySet::parse(br#"{"keys": []}"#).err(),
            Some(JwksError::NoUsableKey)
        );
        let huge = vec![b' '; MAX_JWKS_BYTES + 1];
        assert_eq!(KeySet::parse(&huge).err(), Some(JwksError::TooLarge));
    }
}
