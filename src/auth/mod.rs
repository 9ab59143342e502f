//! Who is asking: the role hierarchy shipped in `roles.json` and the caller as data
//! ([`AuthUser`]). Reading identity from HTTP headers and dev tokens builds on this.

mod roles;
mod user;

pub use roles::{Role, RoleHierarchy};
pub use user::{AuthUser, ClaimsError, MAX_CLAIMS_BYTES};
