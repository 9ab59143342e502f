//! Authorization decisions, made by the Cedar policies in `policies/authz.cedar` (embedded at
//! build time) with the `cedar-policy` crate. The functions here are the library's face; nothing
//! else decides who may see a building, ingest documents or choose the answer model.

use super::{AuthUser, RoleHierarchy};
use cedar_policy::{
    Context, Decision, Entities, Entity, EntityId, EntityTypeName, EntityUid, PolicySet, Request,
    RestrictedExpression,
};
use std::collections::{HashMap, HashSet};
use std::str::FromStr;

const POLICIES: &str = include_str!("../../policies/authz.cedar");

/// A domain no caller is a member of: whoever may see it may see every domain.
const UNCLAIMED_DOMAIN: &str = "\u{0}unclaimed";

/// Decisions remembered at most; past it the memory starts over.
const MAX_REMEMBERED: usize = 4096;

pub struct Authorizer {
    policies: PolicySet,
    /// The weight of `MODEL_OVERRIDE_MIN_ROLE`.
    override_min_weight: u32,
    /// Cedar's decisions so far. A decision depends only on what the key holds (the caller's
    /// subject, roles and domains, the action, the resource; the context is fixed per
    /// authorizer), so the same question is answered the same way again without evaluating the
    /// policies: a live answer asks the same few questions several times.
    decisions: std::sync::Mutex<HashMap<DecisionKey, bool>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct DecisionKey {
    sub: String,
    roles: Vec<String>,
    domains: Vec<String>,
    action: &'static str,
    resource: String,
}

#[derive(Debug, Clone, Copy)]
enum Action {
    ViewBuilding,
    IngestDocuments,
    OverrideModel,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::ViewBuilding => "ViewBuilding",
            Action::IngestDocuments => "IngestDocuments",
            Action::OverrideModel => "OverrideModel",
        }
    }
}

impl Authorizer {
    /// The shipped policies, with `OverrideModel` gated at `model_override_min_role` (a role the
    /// configuration has already checked; an unknown one lets nobody override).
    pub fn new(model_override_min_role: &str) -> Authorizer {
        Authorizer {
            policies: PolicySet::from_str(POLICIES)
                .expect("policies/authz.cedar parses (checked by a unit test)"),
            override_min_weight: RoleHierarchy::shipped()
                .weight(model_override_min_role)
                .unwrap_or(u32::MAX),
            decisions: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The shipped policies with the configured `MODEL_OVERRIDE_MIN_ROLE`.
    pub fn from_config(config: &crate::config::Config) -> Authorizer {
        Authorizer::new(&config.access.model_override_min_role)
    }

    /// Whether `user` may see the buildings of `domain`.
    pub fn can_access_domain(&self, user: &AuthUser, domain: &str) -> bool {
        self.is_allowed(user, Action::ViewBuilding, uid("Domain", domain))
    }

    /// The domains among `candidates` that `user` may see, in order.
    pub fn accessible_domains<'a>(
        &self,
        user: &AuthUser,
        candidates: impl IntoIterator<Item = &'a str>,
    ) -> Vec<&'a str> {
        candidates
            .into_iter()
            .filter(|domain| self.can_access_domain(user, domain))
            .collect()
    }

    /// Whether `user` could see any domain at all (a member of one, or an admin). A caller who
    /// cannot is refused before any downstream call.
    pub fn can_access_any_domain(&self, user: &AuthUser) -> bool {
        !self
            .accessible_domains(user, user.domains.iter().map(String::as_str))
            .is_empty()
            || self.can_access_domain(user, UNCLAIMED_DOMAIN)
    }

    pub fn can_ingest_documents(&self, user: &AuthUser) -> bool {
        self.is_allowed(user, Action::IngestDocuments, platform())
    }

    pub fn can_override_model(&self, user: &AuthUser) -> bool {
        self.is_allowed(user, Action::OverrideModel, platform())
    }

    fn is_allowed(&self, user: &AuthUser, action: Action, resource: EntityUid) -> bool {
        let key = DecisionKey {
            sub: user.sub.clone(),
            roles: user.roles.clone(),
            domains: user.domains.clone(),
            action: action.name(),
            resource: resource.to_string(),
        };
        if let Some(known) = self.remembered().get(&key) {
            return *known;
        }
        let allowed = self.evaluate(user, action, resource);
        let mut remembered = self.remembered();
        if remembered.len() >= MAX_REMEMBERED {
            remembered.clear();
        }
        remembered.insert(key, allowed);
        allowed
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, HashMap<DecisionKey, bool>> {
        // A poisoned memory only holds finished decisions: keep using it.
        self.decisions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Cedar's decision, with nothing remembered.
    fn evaluate(&self, user: &AuthUser, action: Action, resource: EntityUid) -> bool {
        let decide = || -> Option<bool> {
            let principal = principal_entity(user)?;
            let request = Request::new(
                principal.uid(),
                uid("Action", action.name()),
                resource,
                self.context(action)?,
                None,
            )
            .ok()?;
            let entities = Entities::from_entities([principal], None).ok()?;
            let response =
                cedar_policy::Authorizer::new().is_authorized(&request, &self.policies, &entities);
            Some(response.decision() == Decision::Allow)
        };
        // Anything that cannot be expressed as a request is denied.
        decide().unwrap_or(false)
    }

    fn context(&self, action: Action) -> Option<Context> {
        match action {
            Action::OverrideModel => Context::from_pairs([(
                "min_weight".to_string(),
                RestrictedExpression::new_long(i64::from(self.override_min_weight)),
            )])
            .ok(),
            _ => Some(Context::empty()),
        }
    }
}

fn uid(kind: &str, id: &str) -> EntityUid {
    let type_name = EntityTypeName::from_str(&format!("CrowdVision::{kind}"))
        .expect("the entity type names are fixed and valid");
    EntityUid::from_type_name_and_id(type_name, EntityId::new(id))
}

fn platform() -> EntityUid {
    uid("Platform", "crowdvision")
}

fn principal_entity(user: &AuthUser) -> Option<Entity> {
    let roles = RestrictedExpression::new_set(
        user.roles
            .iter()
            .map(|r| RestrictedExpression::new_string(r.clone())),
    );
    let attributes = HashMap::from([
        ("roles".to_string(), roles),
        (
            "weight".to_string(),
            RestrictedExpression::new_long(i64::from(user.weight())),
        ),
    ]);
    let parents: HashSet<EntityUid> = user.domains.iter().map(|d| uid("Domain", d)).collect();
    Entity::new(uid("User", &user.sub), attributes, parents).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLES: [&str; 4] = [
        "standard_customer",
        "business_staff",
        "business_admin",
        "admin",
    ];

    fn user(roles: &[&str], domains: &[&str]) -> AuthUser {
        AuthUser {
            sub: "u".into(),
            roles: roles.iter().map(|r| r.to_string()).collect(),
            domains: domains.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn view_building_needs_membership_or_admin_for_every_role() {
        let authz = Authorizer::new("business_admin");
        for role in ROLES {
            let member = user(&[role], &["acme"]);
            assert!(authz.can_access_domain(&member, "acme"), "{role} of acme");
            let other_domain = authz.can_access_domain(&member, "globex");
            assert_eq!(
                other_domain,
                role == "admin",
                "{role} of acme viewing globex"
            );
            let no_domain = user(&[role], &[]);
            assert_eq!(authz.can_access_domain(&no_domain, "acme"), role == "admin");
            assert_eq!(
                authz.can_access_any_domain(&no_domain),
                role == "admin",
                "{role}"
            );
        }
        let domain_only = user(&[], &["acme"]);
        assert!(authz.can_access_domain(&domain_only, "acme"));
        assert!(authz.can_access_any_domain(&domain_only));
    }

    #[test]
    fn ingest_is_for_admins_only() {
        let authz = Authorizer::new("business_admin");
        for role in ROLES {
            assert_eq!(
                authz.can_ingest_documents(&user(&[role], &["acme"])),
                role == "admin",
                "{role}"
            );
        }
    }

    #[test]
    fn override_follows_the_configured_role() {
        for (min_role, allowed) in [
            ("business_admin", ["business_admin", "admin"].as_slice()),
            ("standard_customer", ROLES.as_slice()),
            ("admin", ["admin"].as_slice()),
        ] {
            let authz = Authorizer::new(min_role);
            for role in ROLES {
                assert_eq!(
                    authz.can_override_model(&user(&[role], &[])),
                    allowed.contains(&role),
                    "{role} with minimum {min_role}"
                );
            }
        }
        assert!(!Authorizer::new("no_such_role").can_override_model(&user(&["admin"], &[])));
    }

    #[test]
    fn a_remembered_decision_is_cedars_and_the_memory_stays_bounded() {
        let authz = Authorizer::new("business_admin");
        for roles in [
            &ROLES[..1],
            &ROLES[1..2],
            &ROLES[2..3],
            &ROLES[3..],
            &[][..],
        ] {
            for domains in [&["acme"][..], &["globex", "acme"][..], &[][..]] {
                let caller = user(roles, domains);
                for domain in ["acme", "globex", UNCLAIMED_DOMAIN] {
                    let resource = uid("Domain", domain);
                    let cedar = authz.evaluate(&caller, Action::ViewBuilding, resource.clone());
                    for _ in 0..2 {
                        assert_eq!(
                            authz.can_access_domain(&caller, domain),
                            cedar,
                            "{roles:?} {domains:?} {domain}"
                        );
                    }
                }
                let cedar = authz.evaluate(&caller, Action::OverrideModel, platform());
                assert_eq!(authz.can_override_model(&caller), cedar);
                assert_eq!(authz.can_override_model(&caller), cedar);
            }
        }
        // Same roles and domains, another subject: asked of Cedar again, not borrowed.
        let before = authz.remembered().len();
        let other = AuthUser {
            sub: "someone-else".into(),
            ..user(&ROLES[..1], &["acme"])
        };
        assert!(authz.can_access_domain(&other, "acme"));
        assert_eq!(authz.remembered().len(), before + 1);
        for i in 0..(MAX_REMEMBERED + 10) {
            authz.can_access_domain(&user(&ROLES[..1], &["acme"]), &format!("d{i}"));
        }
        assert!(authz.remembered().len() <= MAX_REMEMBERED);
        assert!(!authz.can_access_domain(&user(&ROLES[..1], &["acme"]), "globex"));
    }

    #[test]
    fn deny_by_default() {
        let authz = Authorizer::new("business_admin");
        let nobody = AuthUser::anonymous();
        assert!(!authz.can_access_domain(&nobody, "acme"));
        assert!(!authz.can_access_any_domain(&nobody));
        assert!(!authz.can_ingest_documents(&nobody));
        assert!(!authz.can_override_model(&nobody));
        // Unknown roles carry no weight and grant nothing.
        let pretender = user(&["superuser", "Admin"], &[]);
        assert!(!authz.can_access_domain(&pretender, "acme"));
        assert!(!authz.can_ingest_documents(&pretender));
        assert!(!authz.can_override_model(&pretender));
        // Domain names are compared exactly, and odd subjects are just names.
        let odd = AuthUser {
            sub: "\"quoted\" ::User".into(),
            roles: vec![],
            domains: vec!["acme".into()],
        };
        assert!(authz.can_access_domain(&odd, "acme"));
        assert!(!authz.can_access_domain(&odd, "ACME"));
        assert!(!authz.can_access_domain(&odd, "acme "));
    }

    #[test]
    fn accessible_domains_filters_in_order() {
        let authz = Authorizer::new("business_admin");
        let member = user(&["business_staff"], &["acme", "initech"]);
        assert_eq!(
            authz.accessible_domains(&member, ["globex", "initech", "acme"]),
            vec!["initech", "acme"]
        );
    }
}
