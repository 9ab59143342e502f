//! The caller as data: `AuthUser { sub, roles, domains }`, built from gateway claims (the JSON of
//! the `x-gateway-claims` header, or its base64) or from flat `roles`/`domains` claims. Pure: no
//! HTTP, no clock; the header extractor and the dev-token path build on these functions.
//!
//! Effective permissions are the caller's roles expanded downward through the hierarchy, plus
//! `domain:NAME` for each domain. A chunk is visible when its permission list is empty or shares
//! an entry with them. Unknown roles are kept on the user but carry no weight and expand to
//! nothing.

use super::strict_json::{self, StrictJsonError};
use super::RoleHierarchy;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The platform operator role: granted only by a flat `roles` claim or a membership without a
/// domain.
pub const PLATFORM_ADMIN: &str = "admin";

/// What an `admin` membership of one domain counts as.
pub const DOMAIN_ADMIN: &str = "business_admin";

/// Claims larger than this are refused before decoding.
pub const MAX_CLAIMS_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuthUser {
    pub sub: String,
    pub roles: Vec<String>,
    pub domains: Vec<String>,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ClaimsError {
    #[error("the claims are too large")]
    TooLarge,
    #[error("the claims are neither JSON nor base64 of JSON")]
    Malformed,
    #[error("the claims have no subject")]
    MissingSubject,
    #[error("the claims name the key `{0}` twice")]
    RepeatedKey(String),
}

impl From<StrictJsonError> for ClaimsError {
    fn from(error: StrictJsonError) -> ClaimsError {
        match error {
            StrictJsonError::DuplicateKey(key) => ClaimsError::RepeatedKey(key),
            StrictJsonError::Malformed => ClaimsError::Malformed,
        }
    }
}

#[derive(Deserialize)]
struct RawClaims {
    sub: Option<String>,
    #[serde(default)]
    memberships: Vec<Membership>,
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    domains: Vec<String>,
    /// Seconds since the epoch; checked by the request identity, not here.
    exp: Option<serde_json::Number>,
}

#[derive(Deserialize)]
struct Membership {
    domain: Option<String>,
    role: Option<String>,
}

impl AuthUser {
    /// The caller used when `REQUIRE_AUTH=false`: no roles, no domains, public pages only.
    pub fn anonymous() -> AuthUser {
        AuthUser {
            sub: "anonymous".to_string(),
            roles: Vec::new(),
            domains: Vec::new(),
        }
    }

    /// From claims text: JSON, or standard / URL-safe base64 of JSON, padding optional.
    pub fn from_claims(text: &str) -> Result<AuthUser, ClaimsError> {
        AuthUser::from_claims_with_expiry(text).map(|(user, _)| user)
    }

    /// As [`AuthUser::from_claims`], with the claims' `exp` (seconds since the epoch) when set.
    pub fn from_claims_with_expiry(text: &str) -> Result<(AuthUser, Option<f64>), ClaimsError> {
        let text = text.trim();
        if text.len() > MAX_CLAIMS_BYTES {
            return Err(ClaimsError::TooLarge);
        }
        let json = if text.starts_with('{') {
            text.as_bytes().to_vec()
        } else {
            decode_base64(text).ok_or(ClaimsError::Malformed)?
        };
        AuthUser::read_claims(strict_json::parse(&json)?)
    }

    /// From claims already read as strict JSON (a verified token's payload).
    pub fn from_claims_value(claims: serde_json::Value) -> Result<AuthUser, ClaimsError> {
        AuthUser::read_claims(claims).map(|(user, _)| user)
    }

    fn read_claims(claims: serde_json::Value) -> Result<(AuthUser, Option<f64>), ClaimsError> {
        let raw: RawClaims = serde_json::from_value(claims).map_err(|_| ClaimsError::Malformed)?;
        let expiry = raw.exp.as_ref().and_then(serde_json::Number::as_f64);
        Ok((AuthUser::from_raw(raw)?, expiry))
    }

    /// The claims header value the downstream services expect for this caller (base64 of
    /// JSON): every domain paired with every role as memberships, plus the flat lists so that
    /// roles held without a domain are not lost.
    pub fn to_claims_header(&self) -> String {
        let memberships: Vec<serde_json::Value> = self
            .domains
            .iter()
            .flat_map(|domain| {
                self.roles
                    .iter()
                    .map(move |role| serde_json::json!({"domain": domain, "role": role}))
            })
            .collect();
        let claims = serde_json::json!({
            "sub": self.sub,
            "memberships": memberships,
            "roles": self.roles,
            "domains": self.domains,
        });
        base64::engine::general_purpose::STANDARD.encode(claims.to_string())
    }

    fn from_raw(raw: RawClaims) -> Result<AuthUser, ClaimsError> {
        let sub = raw
            .sub
            .filter(|s| !s.trim().is_empty())
            .ok_or(ClaimsError::MissingSubject)?;
        let mut roles: BTreeSet<String> = raw.roles.into_iter().collect();
        let mut domains: BTreeSet<String> = raw.domains.into_iter().collect();
        for membership in raw.memberships {
            if let Some(role) = membership.role {
                // `admin` is a platform role (it sees every domain). Held inside one domain's
                // membership it is that domain's highest customer role, never platform-wide.
                let scoped_admin = role == PLATFORM_ADMIN && membership.domain.is_some();
                roles.insert(if scoped_admin {
                    DOMAIN_ADMIN.to_string()
                } else {
                    role
                });
            }
            if let Some(domain) = membership.domain {
                domains.insert(domain);
            }
        }
        roles.retain(|r| !r.trim().is_empty());
        domains.retain(|d| !d.trim().is_empty());
        Ok(AuthUser {
            sub,
            roles: roles.into_iter().collect(),
            domains: domains.into_iter().collect(),
        })
    }

    /// Roles expanded downward through the hierarchy, plus `domain:NAME` for each domain;
    /// sorted and without duplicates.
    pub fn effective_permissions(&self) -> Vec<String> {
        let hierarchy = RoleHierarchy::shipped();
        let mut permissions: BTreeSet<String> = BTreeSet::new();
        for role in &self.roles {
            permissions.extend(
                hierarchy
                    .expand_downward(role)
                    .into_iter()
                    .map(str::to_string),
            );
        }
        permissions.extend(self.domains.iter().map(|d| format!("domain:{d}")));
        permissions.into_iter().collect()
    }

    /// The weight of the caller's highest known role; 0 with none.
    pub fn weight(&self) -> u32 {
        let hierarchy = RoleHierarchy::shipped();
        self.roles
            .iter()
            .filter_map(|r| hierarchy.weight(r))
            .max()
            .unwrap_or(0)
    }
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let unpadded = text.trim_end_matches('=');
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(unpadded)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(unpadded))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(json: &str, engine: &base64::engine::GeneralPurpose) -> String {
        engine.encode(json)
    }

    const GATEWAY: &str = r#"{"sub":"u1","email":"a@b.c","memberships":[{"domain":"acme","role":"business_staff"},{"domain":"globex","role":"standard_customer"}],"exp":1767225600}"#;

    #[test]
    fn an_admin_membership_of_one_domain_is_not_a_platform_admin() {
        let scoped = AuthUser::from_claims(
            r#"{"sub":"d","memberships":[{"domain":"acme","role":"admin"}]}"#,
        )
        .unwrap();
        assert_eq!(scoped.roles, vec!["business_admin".to_string()]);
        assert_eq!(scoped.domains, vec!["acme".to_string()]);
        let authz = crate::auth::authz::Authorizer::new("business_admin");
        assert!(authz.can_access_domain(&scoped, "acme"));
        assert!(!authz.can_access_domain(&scoped, "globex"));
        assert!(!authz.can_ingest_documents(&scoped));
        assert!(!scoped
            .effective_permissions()
            .contains(&"admin".to_string()));
        // Held without a domain, flat or as a membership, it is the platform role.
        for claims in [
            r#"{"sub":"o","roles":["admin"]}"#,
            r#"{"sub":"o","memberships":[{"role":"admin"}]}"#,
        ] {
            let operator = AuthUser::from_claims(claims).unwrap();
            assert!(authz.can_access_domain(&operator, "globex"), "{claims}");
            assert!(authz.can_ingest_documents(&operator), "{claims}");
        }
    }

    #[test]
    fn gateway_claims_that_name_a_key_twice_are_refused_in_every_form() {
        use base64::engine::general_purpose::STANDARD;
        let promoted = r#"{"sub":"eve","roles":["standard_customer"],"roles":["admin"]}"#;
        for text in [promoted.to_string(), encoded(promoted, &STANDARD)] {
            assert_eq!(
                AuthUser::from_claims(&text),
                Err(ClaimsError::RepeatedKey("roles".into()))
            );
        }
        let twice_sub = r#"{"sub":"a","sub":"b"}"#;
        assert_eq!(
            AuthUser::from_claims(twice_sub),
            Err(ClaimsError::RepeatedKey("sub".into()))
        );
    }

    #[test]
    fn gateway_memberships_flatten_to_roles_and_domains() {
        let user = AuthUser::from_claims(GATEWAY).unwrap();
        assert_eq!(user.sub, "u1");
        assert_eq!(user.roles, ["business_staff", "standard_customer"]);
        assert_eq!(user.domains, ["acme", "globex"]);
    }

    #[test]
    fn base64_in_every_form_is_accepted() {
        use base64::engine::general_purpose::{
            STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD,
        };
        for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
            let user = AuthUser::from_claims(&encoded(GATEWAY, engine)).unwrap();
            assert_eq!(user.sub, "u1");
        }
    }

    #[test]
    fn a_minted_header_reads_back_as_the_same_caller() {
        for user in [
            AuthUser::from_claims(GATEWAY).unwrap(),
            AuthUser::from_claims(r#"{"sub":"a","roles":["admin"]}"#).unwrap(),
            AuthUser::from_claims(r#"{"sub":"d","domains":["acme"]}"#).unwrap(),
        ] {
            assert_eq!(
                AuthUser::from_claims(&user.to_claims_header()).unwrap(),
                user
            );
        }
    }

    #[test]
    fn expiry_is_read_when_present() {
        let (_, exp) = AuthUser::from_claims_with_expiry(GATEWAY).unwrap();
        assert_eq!(exp, Some(1767225600.0));
        let (_, none) = AuthUser::from_claims_with_expiry(r#"{"sub":"x"}"#).unwrap();
        assert_eq!(none, None);
        assert_eq!(
            AuthUser::from_claims(r#"{"sub":"x","exp":"soon"}"#),
            Err(ClaimsError::Malformed)
        );
    }

    #[test]
    fn flat_claims_pass_through() {
        let user =
            AuthUser::from_claims(r#"{"sub":"e","roles":["admin"],"domains":["acme"]}"#).unwrap();
        assert_eq!(
            (user.roles.as_slice(), user.domains.as_slice()),
            (&["admin".to_string()][..], &["acme".to_string()][..])
        );
    }

    #[test]
    fn effective_permissions_expand_roles_downward_and_prefix_domains() {
        let user = AuthUser::from_claims(GATEWAY).unwrap();
        assert_eq!(
            user.effective_permissions(),
            [
                "business_staff",
                "domain:acme",
                "domain:globex",
                "standard_customer"
            ]
        );
        let admin = AuthUser::from_claims(r#"{"sub":"a","roles":["admin"]}"#).unwrap();
        assert_eq!(admin.effective_permissions().len(), 4);
    }

    #[test]
    fn unknown_roles_carry_no_weight_and_no_permission() {
        let user = AuthUser::from_claims(r#"{"sub":"x","roles":["superuser"]}"#).unwrap();
        assert_eq!(user.weight(), 0);
        assert!(user.effective_permissions().is_empty());
    }

    #[test]
    fn malformed_claims_are_refused() {
        assert_eq!(AuthUser::from_claims("%%%"), Err(ClaimsError::Malformed));
        assert_eq!(
            AuthUser::from_claims(&encoded(
                "not json",
                &base64::engine::general_purpose::STANDARD
            )),
            Err(ClaimsError::Malformed)
        );
        assert_eq!(
            AuthUser::from_claims(r#"{"email":"x"}"#),
            Err(ClaimsError::MissingSubject)
        );
        assert_eq!(
            AuthUser::from_claims(r#"{"sub":"x","memberships":"nope"}"#),
            Err(ClaimsError::Malformed)
        );
        assert_eq!(
            AuthUser::from_claims(&"a".repeat(MAX_CLAIMS_BYTES + 1)),
            Err(ClaimsError::TooLarge)
        );
    }
}
