//! Who is asking and what they may do: the role hierarchy shipped in `roles.json`, the caller as
//! data ([`AuthUser`]), the caller of a request ([`identity`]: gateway claims header, OIDC
//! bearer token, dev token, anonymous), signed tokens ([`jwt`]), the page's sign-in relay ([`signin`]), OIDC keys ([`oidc`], pure, and
//! [`jwks`], their fetching cache), and the Cedar policies ([`authz`]).

pub mod authz;
pub mod identity;
pub mod jwks;
pub mod jwt;
pub mod oidc;
pub mod roles;
pub mod signin;
pub mod strict_json;
mod user;

pub use roles::{Role, RoleHierarchy};
pub use user::{AuthUser, ClaimsError, MAX_CLAIMS_BYTES};
