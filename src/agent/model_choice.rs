//! Which answer model a request runs on. A caller may name another model only when the Cedar
//! policy allows it `OverrideModel` (a role at or above `MODEL_OVERRIDE_MIN_ROLE`) and, when
//! `ALLOWED_MODELS` is not empty, the model is listed. The embedding model is never chosen per
//! request.

use crate::auth::authz::Authorizer;
use crate::auth::AuthUser;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelChoiceError {
    /// The server answers 403.
    #[error("choosing the answer model needs the role {min_role} or higher")]
    Forbidden { min_role: String },
    /// The server answers 400.
    #[error("the model {model:?} is not one of the allowed models")]
    NotAllowed { model: String },
    /// The server answers 400: not something a model name can be, whatever the allowlist.
    #[error("{MAX_MODEL_NAME_CHARS} characters at most, letters, digits and . _ - / : @ + only")]
    InvalidName,
}

/// Longest model name accepted in an override.
pub const MAX_MODEL_NAME_CHARS: usize = 100;

/// Whether `name` can be a model name: short, and only characters model names use.
pub fn valid_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_MODEL_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/:@+".contains(c))
}

#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub default_model: String,
    /// Named in the refusal; the decision itself is the policy's.
    pub min_role: String,
    pub allowed: Vec<String>,
}

impl ModelChoice {
    /// The model for this request. Naming the default model is not an override and needs no
    /// role; an empty name counts as none.
    pub fn resolve(
        &self,
        requested: Option<&str>,
        user: &AuthUser,
        authz: &Authorizer,
    ) -> Result<String, ModelChoiceError> {
        let requested = requested.map(str::trim).filter(|m| !m.is_empty());
        let Some(model) = requested.filter(|m| *m != self.default_model) else {
            return Ok(self.default_model.clone());
        };
        if !authz.can_override_model(user) {
            return Err(ModelChoiceError::Forbidden {
                min_role: self.min_role.clone(),
            });
        }
        if !valid_model_name(model) {
            return Err(ModelChoiceError::InvalidName);
        }
        if !self.allowed.is_empty() && !self.allowed.iter().any(|m| m == model) {
            return Err(ModelChoiceError::NotAllowed {
                model: model.chars().take(100).collect(),
            });
        }
        Ok(model.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: &str) -> AuthUser {
        AuthUser {
            sub: "u".into(),
            roles: vec![role.into()],
            domains: vec!["acme".into()],
        }
    }

    fn authz() -> Authorizer {
        Authorizer::new("business_admin")
    }

    fn choice(allowed: &[&str]) -> ModelChoice {
        ModelChoice {
            default_model: "openai/gpt-4o-mini".into(),
            min_role: "business_admin".into(),
            allowed: allowed.iter().map(|m| m.to_string()).collect(),
        }
    }

    #[test]
    fn no_request_or_the_default_needs_no_role() {
        let staff = user("business_staff");
        assert_eq!(
            choice(&[]).resolve(None, &staff, &authz()).unwrap(),
            "openai/gpt-4o-mini"
        );
        assert_eq!(
            choice(&[]).resolve(Some(" "), &staff, &authz()).unwrap(),
            "openai/gpt-4o-mini"
        );
        assert_eq!(
            choice(&[])
                .resolve(Some("openai/gpt-4o-mini"), &staff, &authz())
                .unwrap(),
            "openai/gpt-4o-mini"
        );
    }

    #[test]
    fn below_the_role_is_forbidden_before_the_list_is_read() {
        for role in ["standard_customer", "business_staff", "made_up"] {
            assert!(matches!(
                choice(&["x"]).resolve(Some("other/model"), &user(role), &authz()),
                Err(ModelChoiceError::Forbidden { .. })
            ));
        }
    }

    #[test]
    fn at_or_above_the_role_the_list_decides() {
        for role in ["business_admin", "admin"] {
            assert_eq!(
                choice(&[])
                    .resolve(Some("any/model"), &user(role), &authz())
                    .unwrap(),
                "any/model"
            );
            assert_eq!(
                choice(&["google/gemini-2.5-flash"])
                    .resolve(Some("google/gemini-2.5-flash"), &user(role), &authz())
                    .unwrap(),
                "google/gemini-2.5-flash"
            );
            assert!(matches!(
                choice(&["google/gemini-2.5-flash"]).resolve(
                    Some("any/model"),
                    &user(role),
                    &authz()
                ),
                Err(ModelChoiceError::NotAllowed { .. })
            ));
        }
    }
}
