//! Who is asking. For now this holds the role hierarchy shipped in `roles.json`; the caller's
//! identity (`AuthUser`) and its effective permissions come with the retrieval issue.

mod roles;

pub use roles::{Role, RoleHierarchy};
