//! The weighted role hierarchy shared with the rest of the fleet (`roles.json` at the repository
//! root, embedded at build time). A role outranks every role of lower weight; an unknown role
//! carries no weight at all.

use serde::Deserialize;
use std::sync::OnceLock;

const ROLES_JSON: &str = include_str!("../../roles.json");

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Role {
    pub name: String,
    pub weight: u32,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RoleHierarchy {
    roles: Vec<Role>,
}

impl RoleHierarchy {
    /// The hierarchy shipped with the binary.
    pub fn shipped() -> &'static RoleHierarchy {
        static SHIPPED: OnceLock<RoleHierarchy> = OnceLock::new();
        SHIPPED.get_or_init(|| {
            serde_json::from_str(ROLES_JSON)
                .expect("roles.json is embedded at build time and valid")
        })
    }

    pub fn weight(&self, role: &str) -> Option<u32> {
        self.roles.iter().find(|r| r.name == role).map(|r| r.weight)
    }

    pub fn is_known(&self, role: &str) -> bool {
        self.weight(role).is_some()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.roles.iter().map(|r| r.name.as_str())
    }

    /// Every known role at or below the given role's weight; empty for an unknown role.
    pub fn expand_downward(&self, role: &str) -> Vec<&str> {
        match self.weight(role) {
            Some(top) => self
                .roles
                .iter()
                .filter(|r| r.weight <= top)
                .map(|r| r.name.as_str())
                .collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_expands_to_every_role() {
        let h = RoleHierarchy::shipped();
        let mut all = h.expand_downward("admin");
        all.sort();
        assert_eq!(
            all,
            [
                "admin",
                "business_admin",
                "business_staff",
                "standard_customer"
            ]
        );
    }

    #[test]
    fn staff_does_not_hold_admin_roles() {
        let h = RoleHierarchy::shipped();
        let staff = h.expand_downward("business_staff");
        assert!(staff.contains(&"standard_customer"));
        assert!(!staff.contains(&"business_admin"));
    }

    #[test]
    fn unknown_role_carries_no_weight() {
        let h = RoleHierarchy::shipped();
        assert_eq!(h.weight("superuser"), None);
        assert!(h.expand_downward("superuser").is_empty());
    }
}
