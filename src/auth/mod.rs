//! Who is asking and what they may do: the role hierarchy shipped in `roles.json`, the caller as
//! data ([`AuthUser`]), the caller of a request ([`identity`]: gateway claims header, dev token,
//! anonymous), the dev token itself ([`jwt`]), and the Cedar policies ([`authz`]).

pub mod authz;
pub mod identity;
pub mod jwt;
mod roles;
mod user;

pub use roles::{Role, RoleHierarchy};
pub use user::{AuthUser, ClaimsError, MAX_CLAIMS_BYTES};
