//! `doctor`: the effective settings and where each came from, then a live check of every part
//! the agent talks to, each ✓ or ✗ with what to do.

use super::out::outln;
use anyhow::Result;
use clap::Args;
use crowdvision_agent::compose;
use crowdvision_agent::config::{is_secret, redact, settings, Config, RawSettings};
use crowdvision_agent::retrieval::embed;
use crowdvision_agent::retrieval::store::check_embedding;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the settings and checks as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Setting {
    name: &'static str,
    value: String,
    /// environment, the --config file, .env, or default.
    origin: String,
}

#[derive(Debug, Serialize)]
struct Check {
    part: &'static str,
    ok: bool,
    detail: String,
    /// What to do when the check failed.
    fix: Option<String>,
}

impl Check {
    fn pass(part: &'static str, detail: impl Into<String>) -> Check {
        Check {
            part,
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fail(part: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            part,
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

pub async fn run(config_file: Option<&Path>, args: DoctorArgs) -> Result<ExitCode> {
    let raw = RawSettings::gather(config_file)?;
    let (config, effective) = Config::read(&raw)?;
    // Every setting of the table, in its order; one these settings make no use of says so.
    let settings: Vec<Setting> = settings::TABLE
        .iter()
        .map(|setting| Setting {
            name: setting.name,
            value: effective
                .get(setting.name)
                .map_or("(not used with these settings)".to_string(), |value| {
                    shown(setting.name, value)
                }),
            origin: raw
                .origin(setting.name)
                .map_or("default".to_string(), |o| o.to_string()),
        })
        .collect();
    let checks = vec![
        identity_check(&config).await,
        store_check(&config).await,
        provider_check(&config).await,
        embedder_check(&config).await,
        service_check("twin-service", config.downstream.twin_service_url.as_str()).await,
        service_check(
            "sensor-service",
            config.downstream.sensor_service_url.as_str(),
        )
        .await,
    ];
    let healthy = checks.iter().all(|c| c.ok);
    if args.json {
        let body = serde_json::json!({ "settings": settings, "checks": checks });
        outln!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        print_report(&settings, &checks);
    }
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_report(settings: &[Setting], checks: &[Check]) {
    outln!("Settings (value, then where it came from):");
    let width = settings.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for setting in settings {
        outln!(
            "  {:width$}  {}  ({})",
            setting.name,
            setting.value,
            setting.origin
        );
    }
    outln!("\nChecks:");
    for check in checks {
        let mark = if check.ok { "✓" } else { "✗" };
        outln!("  {mark} {}: {}", check.part, check.detail);
        if let Some(fix) = &check.fix {
            outln!("      fix: {fix}");
        }
    }
}

/// A setting's value as it may be shown: secrets masked, passwords in URLs redacted.
fn shown(name: &str, value: &str) -> String {
    if is_secret(name) && value != "(unset)" {
        "(set, hidden)".to_string()
    } else if value.is_empty() {
        "(empty)".to_string()
    } else if name.ends_with("_URL") {
        redact(value)
    } else {
        value.to_string()
    }
}

async fn store_check(config: &Config) -> Check {
    let opened = match compose::store(config, false).await {
        Ok(opened) => opened,
        Err(error) => {
            return Check::fail(
                "store",
                error.to_string(),
                "build the knowledge base with `crowdvision-agent ingest PATH`, or set \
                 DATABASE_URL",
            )
        }
    };
    let status = match opened.status().await {
        Ok(status) => status,
        Err(error) => return Check::fail("store", error.to_string(), "check DATABASE_URL"),
    };
    if !status.pending_migrations.is_empty() {
        return Check::fail(
            "store",
            format!(
                "{} at {}: migrations {:?} pending",
                status.backend, status.location, status.pending_migrations
            ),
            "run `crowdvision-agent db migrate`",
        );
    }
    let stored = format!(
        "{} at {}: migrated, {} documents, {} chunks, model {} ({} dimensions)",
        status.backend,
        status.location,
        status.documents,
        status.chunks,
        status.embedding_model.as_deref().unwrap_or("-"),
        status
            .embedding_dim
            .map_or("-".to_string(), |d| d.to_string()),
    );
    let embedder = embed::from_config(
        &config
            .embedding
            .for_store(status.embedding_model.as_deref()),
    );
    match check_embedding(
        status.embedding_model,
        status.embedding_dim,
        embedder.model(),
        embedder.dim(),
    ) {
        Ok(_) => Check::pass("store", stored),
        Err(error) => {
            let fix = match &error {
                crowdvision_agent::retrieval::store::StoreError::EmbeddingMismatch {
                    fix, ..
                } => fix.clone(),
                _ => "rebuild the store".to_string(),
            };
            Check::fail(
                "store",
                format!("{stored}; {error}"),
                format!("{fix}, or rebuild it (`crowdvision-agent db reset --yes`, then ingest)"),
            )
        }
    }
}

async fn provider_check(config: &Config) -> Check {
    let base = config.llm.base_url.as_str().trim_end_matches('/');
    let Some(key) = &config.llm.api_key else {
        return Check::fail(
            "provider",
            format!("no key for {base}"),
            "set OPENROUTER_API_KEY (or LLM_API_KEY)",
        );
    };
    let client = http_client();
    let response = client
        .get(format!("{base}/models"))
        .bearer_auth(key)
        .send()
        .await;
    let response = match response {
        Ok(response) => response,
        Err(error) => {
            return Check::fail(
                "provider",
                format!("cannot reach {base}: {}", error.without_url()),
                "check LLM_BASE_URL and the network",
            )
        }
    };
    let status = response.status();
    if !status.is_success() {
        return Check::fail(
            "provider",
            format!("{base}/models answered HTTP {}", status.as_u16()),
            "check the key (OPENROUTER_API_KEY or LLM_API_KEY) and LLM_BASE_URL",
        );
    }
    let listed: Vec<String> = response
        .json::<serde_json::Value>()
        .await
        .ok()
        .and_then(|body| {
            body["data"].as_array().map(|models| {
                models
                    .iter()
                    .filter_map(|m| m["id"].as_str().map(str::to_string))
                    .collect()
            })
        })
        .unwrap_or_default();
    let model = &config.llm.answer_model;
    if listed.iter().any(|m| m == model) {
        Check::pass("provider", format!("{base}: {model} is listed"))
    } else {
        Check::fail(
            "provider",
            format!("{base} answers, but does not list {model}"),
            format!(
                "set ANSWER_MODEL to a model it lists{}",
                listed
                    .first()
                    .map(|m| format!(" (such as {m})"))
                    .unwrap_or_default()
            ),
        )
    }
}

async fn embedder_check(config: &Config) -> Check {
    let embedder = embed::from_config(&config.embedding);
    match embedder.embed(&["doctor".to_string()]).await {
        Ok(vectors) if vectors.first().map(Vec::len) == Some(embedder.dim()) => Check::pass(
            "embedder",
            format!(
                "{} answers with {} dimensions",
                embedder.model(),
                embedder.dim()
            ),
        ),
        Ok(vectors) => Check::fail(
            "embedder",
            format!(
                "{} answers with {} dimensions, EMBEDDING_DIM says {}",
                embedder.model(),
                vectors.first().map_or(0, Vec::len),
                embedder.dim()
            ),
            "set EMBEDDING_DIM to the model's size",
        ),
        Err(error) => Check::fail(
            "embedder",
            format!("{}: {error}", embedder.model()),
            "check EMBEDDING_PROVIDER, EMBEDDING_BASE_URL and EMBEDDING_API_KEY",
        ),
    }
}

/// Any HTTP answer counts as reachable: the services refuse an unidentified request.
/// Which identity paths `serve` accepts, and for OIDC whether the JWKS reads.
async fn identity_check(config: &Config) -> Check {
    let modes =
        crowdvision_agent::auth::identity::IdentitySettings::from_config(&config.access).describe();
    let Some(oidc) = &config.access.oidc else {
        return Check::pass("identity", modes);
    };
    let cache = crowdvision_agent::auth::jwks::JwksCache::new(
        oidc.jwks_url.clone(),
        crowdvision_agent::auth::jwks::FETCH_TIMEOUT,
    );
    match cache.refresh_now().await {
        Ok(keys) => Check::pass("identity", format!("{modes}; {keys} signing keys read")),
        Err(error) => Check::fail(
            "identity",
            format!("{modes}; the JWKS could not be read: {error}"),
            "point OIDC_JWKS_URL at the identity provider's jwks_uri (from its \
             /.well-known/openid-configuration)",
        ),
    }
}

async fn service_check(part: &'static str, url: &str) -> Check {
    match http_client().get(url).send().await {
        Ok(response) => Check::pass(
            part,
            format!("{url} answers (HTTP {})", response.status().as_u16()),
        ),
        Err(error) => Check::fail(
            part,
            format!("nothing answers at {url}: {}", error.without_url()),
            "start the service, or `crowdvision-agent sim` to try things out (then point \
             TWIN_SERVICE_URL and SENSOR_SERVICE_URL at it)",
        ),
    }
}

fn http_client() -> reqwest::Client {
    crowdvision_agent::http::client_builder()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("the HTTP client builds")
}
