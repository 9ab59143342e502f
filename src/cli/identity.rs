//! Who a command acts as: `--claims FILE` (the JSON of the `x-gateway-claims` header, or its
//! base64), or the anonymous caller when `REQUIRE_AUTH=false`.

use anyhow::{bail, Context, Result};
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::Config;
use std::path::Path;

pub fn resolve(claims: Option<&Path>, config: &Config) -> Result<AuthUser> {
    match claims {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            AuthUser::from_claims(&text)
                .with_context(|| format!("{} does not hold usable claims", path.display()))
        }
        None if !config.access.require_auth => Ok(AuthUser::anonymous()),
        None => bail!(
            "this command acts as a caller: pass --claims FILE (gateway claims JSON or base64), \
             or set REQUIRE_AUTH=false to act anonymously on your own machine"
        ),
    }
}
