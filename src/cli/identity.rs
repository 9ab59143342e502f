//! Who a command acts as: `--claims FILE` (the JSON of the `x-gateway-claims` header, or its
//! base64), `--token JWT` (a development token, verified with `EVAL_JWT_SECRET`), or the
//! anonymous caller when `REQUIRE_AUTH=false`.

use anyhow::{bail, Context, Result};
use crowdvision_agent::auth::identity::Caller;
use crowdvision_agent::auth::jwt::{verify_hs256, LEEWAY_SECONDS};
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::client::RemoteIdentity;
use crowdvision_agent::config::Config;
use std::path::Path;

/// The caller's identity as given on the command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Given<'a> {
    pub claims: Option<&'a Path>,
    pub token: Option<&'a str>,
}

/// The caller in this process. Every refusal is a usage error (exit 2).
pub fn resolve(given: Given<'_>, config: &Config) -> Result<Caller> {
    resolve_inner(given, config).map_err(super::usage)
}

fn resolve_inner(given: Given<'_>, config: &Config) -> Result<Caller> {
    match (given.claims, given.token) {
        (Some(_), Some(_)) => bail!("give --claims or --token, not both"),
        (Some(path), None) => from_claims_file(path),
        (None, Some(token)) => from_token(token, config),
        (None, None) if !config.access.require_auth => Ok(Caller::anonymous()),
        (None, None) => bail!(
            "this command acts as a caller: pass --claims FILE (gateway claims JSON or base64) or \
             --token JWT (with EVAL_JWT_SECRET), or set REQUIRE_AUTH=false to act anonymously on \
             your own machine"
        ),
    }
}

/// The identity to present to a running server: the claims (checked here, sent as the claims
/// header), the token (checked by the server), or none.
pub fn remote(given: Given<'_>) -> Result<RemoteIdentity> {
    remote_inner(given).map_err(super::usage)
}

fn remote_inner(given: Given<'_>) -> Result<RemoteIdentity> {
    match (given.claims, given.token) {
        (Some(_), Some(_)) => bail!("give --claims or --token, not both"),
        (Some(path), None) => {
            let caller = from_claims_file(path)?;
            Ok(RemoteIdentity::Claims(
                caller.forwarded_claims.unwrap_or_default(),
            ))
        }
        (None, Some(token)) => Ok(RemoteIdentity::Token(token.to_string())),
        (None, None) => Ok(RemoteIdentity::Anonymous),
    }
}

fn from_claims_file(path: &Path) -> Result<Caller> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (user, expiry) = AuthUser::from_claims_with_expiry(&text)
        .with_context(|| format!("{} does not hold usable claims", path.display()))?;
    if expiry.is_some_and(|exp| exp + LEEWAY_SECONDS <= now()) {
        bail!(
            "the claims in {} have expired (their exp is in the past)",
            path.display()
        );
    }
    Ok(Caller::forwarding(user, &text))
}

fn from_token(token: &str, config: &Config) -> Result<Caller> {
    let Some(secret) = &config.access.eval_jwt_secret else {
        bail!("--token needs EVAL_JWT_SECRET, the secret the development token is signed with");
    };
    let user = verify_hs256(token, secret.as_bytes(), now()).context("--token is not usable")?;
    Ok(Caller::minted(user))
}

fn now() -> f64 {
    crowdvision_agent::clock::unix_seconds()
}
