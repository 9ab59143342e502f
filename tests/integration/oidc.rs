//! A test identity provider on loopback: signing keys from `tests/fixtures/oidc/`, tokens signed
//! with them, and a JWKS endpoint whose answer the test changes (keys, down, slow, HTML, huge).
//! Also the JWKS cache against it: rotation, an unreachable provider, and hostile documents.
//! Its login page and token endpoint for the page's sign-in are in `oidc_login`.

use crate::util::repo_root;
use crowdvision_agent::auth::jwks::{JwksCache, KeyLookup};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const ISSUER: &str = "https://login.test.invalid/realms/crowdvision";
pub const AUDIENCE: &str = "crowdvision-agent";

/// What the JWKS endpoint answers.
#[derive(Clone)]
pub enum Jwks {
    Keys(Vec<&'static str>),
    Down,
    Html,
    Huge,
    ManyKeys,
    Slow(Duration),
}

pub struct TestIdp {
    pub jwks_url: String,
    /// This stand-in's own issuer (`http://127.0.0.1:PORT`), serving its metadata; tests that
    /// need no discovery use [`ISSUER`] instead.
    pub issuer: String,
    /// The sign-in half: login page, codes, refresh tokens (`oidc_login`).
    pub logins: crate::oidc_login::Logins,
    answer: Arc<Mutex<Jwks>>,
    fetches: Arc<Mutex<usize>>,
}

/// The fixture key named `kid` and its algorithm: `rsa-1`, `rsa-2` (RS256), `ec-1` (ES256).
fn key(kid: &str) -> (EncodingKey, Algorithm) {
    let pem = std::fs::read(repo_root().join(format!("tests/fixtures/oidc/{kid}.pem"))).unwrap();
    if kid.starts_with("ec") {
        (EncodingKey::from_ec_pem(&pem).unwrap(), Algorithm::ES256)
    } else {
        (EncodingKey::from_rsa_pem(&pem).unwrap(), Algorithm::RS256)
    }
}

fn public_jwk(kid: &str) -> Jwk {
    let (encoding, algorithm) = key(kid);
    let mut jwk = Jwk::from_encoding_key(&encoding, algorithm).unwrap();
    jwk.common.key_id = Some(kid.to_string());
    jwk
}

/// `claims` signed by fixture key `kid`, with `kid` in the header.
pub fn sign(kid: &str, claims: &Value) -> String {
    let (encoding, algorithm) = key(kid);
    let mut header = Header::new(algorithm);
    header.kid = Some(kid.to_string());
    jsonwebtoken::encode(&header, claims, &encoding).unwrap()
}

pub fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Good claims for `sub` of Acme's staff, for this deployment's issuer and audience.
pub fn staff_claims(sub: &str) -> Value {
    json!({"sub": sub, "iss": ISSUER, "aud": [AUDIENCE, "account"],
        "exp": now() + 600, "nbf": now() - 5, "iat": now(),
        "memberships": [{"domain": "acme", "role": "business_staff"}]})
}

impl TestIdp {
    pub async fn start(answer: Jwks) -> TestIdp {
        let answer = Arc::new(Mutex::new(answer));
        let fetches = Arc::new(Mutex::new(0));
        let (shared, counted) = (answer.clone(), fetches.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let url = format!("{issuer}/jwks");
        // The authorization server's metadata (RFC 8414), as an MCP host reads it once the
        // resource has named this issuer.
        let metadata = json!({
            "issuer": issuer,
            "jwks_uri": url,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        });
        let (login_routes, logins) = crate::oidc_login::routes(issuer.clone());
        let app = axum::Router::new()
            .route(
                "/jwks",
                axum::routing::get(move || {
                    let (shared, counted) = (shared.clone(), counted.clone());
                    async move {
                        *counted.lock().unwrap() += 1;
                        let answer = shared.lock().unwrap().clone();
                        jwks_response(answer).await
                    }
                }),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || async move { axum::Json(metadata) }),
            )
            .merge(login_routes);
        tokio::spawn(async move { axum::serve(listener, app).await });
        TestIdp {
            jwks_url: url,
            issuer,
            logins,
            answer,
            fetches,
        }
    }

    pub fn answer(&self, answer: Jwks) {
        *self.answer.lock().unwrap() = answer;
    }

    pub fn fetches(&self) -> usize {
        *self.fetches.lock().unwrap()
    }
}

async fn jwks_response(answer: Jwks) -> axum::response::Response {
    use axum::response::IntoResponse;
    let json = |body: String| ([("content-type", "application/json")], body).into_response();
    match answer {
        Jwks::Keys(kids) => {
            let set = JwkSet {
                keys: kids.iter().map(|k| public_jwk(k)).collect(),
            };
            json(serde_json::to_string(&set).unwrap())
        }
        Jwks::Down => (axum::http::StatusCode::BAD_GATEWAY, "down").into_response(),
        Jwks::Html => (
            [("content-type", "text/html")],
            "<html><body>Sign in</body></html>",
        )
            .into_response(),
        Jwks::Huge => json(format!(
            r#"{{"keys": [], "padding": "{}"}}"#,
            "x".repeat(10 * 1024 * 1024)
        )),
        Jwks::ManyKeys => {
            let one = serde_json::to_value(public_jwk("rsa-1")).unwrap();
            let keys: Vec<Value> = (0..10_000)
                .map(|i| {
                    let mut key = one.clone();
                    key["kid"] = json!(format!("k{i}"));
                    key
                })
                .collect();
            json(json!({ "keys": keys }).to_string())
        }
        Jwks::Slow(delay) => {
            tokio::time::sleep(delay).await;
            json(
                serde_json::to_string(&JwkSet {
                    keys: vec![public_jwk("rsa-1")],
                })
                .unwrap(),
            )
        }
    }
}

fn cache(idp: &TestIdp, timeout: Duration) -> JwksCache {
    JwksCache::new(idp.jwks_url.parse().unwrap(), timeout)
}

fn found(lookup: &KeyLookup) -> &'static str {
    match lookup {
        KeyLookup::Found(_) => "found",
        KeyLookup::Unknown => "unknown",
        KeyLookup::Unavailable => "unavailable",
    }
}

#[tokio::test]
async fn keys_rotate_on_an_unknown_kid_and_survive_a_provider_outage() {
    let idp = TestIdp::start(Jwks::Keys(vec!["rsa-1", "ec-1"])).await;
    let cache = cache(&idp, Duration::from_secs(5));
    assert_eq!(found(&cache.key("rsa-1").await), "found");
    assert_eq!(found(&cache.key("ec-1").await), "found");
    assert_eq!(idp.fetches(), 1, "held keys are not fetched again");

    // Rotation: rsa-2 replaces rsa-1. A token naming rsa-2 fetches the set again (once the
    // refetch interval has passed) and is then known; rsa-1 is gone with the old set.
    idp.answer(Jwks::Keys(vec!["rsa-2", "ec-1"]));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(found(&cache.key("rsa-2").await), "found");
    assert_eq!(found(&cache.key("rsa-1").await), "unknown");
    // Unknown kids within the interval do not fetch again: a flood of random kids costs one
    // fetch a second at most.
    let before = idp.fetches();
    for i in 0..50 {
        assert_eq!(found(&cache.key(&format!("random-{i}")).await), "unknown");
    }
    assert!(idp.fetches() <= before + 1, "{} fetches", idp.fetches());

    // The provider goes down: the keys held keep working, and a failed refresh keeps them.
    idp.answer(Jwks::Down);
    assert!(cache.refresh_now().await.is_err());
    assert_eq!(found(&cache.key("rsa-2").await), "found");
    assert_eq!(cache.held_keys(), Some(2));
}

#[tokio::test]
async fn hostile_or_broken_documents_cache_nothing_and_take_bounded_time() {
    for (answer, name) in [
        (Jwks::Down, "down"),
        (Jwks::Html, "html"),
        (Jwks::Huge, "10 MiB"),
        (Jwks::ManyKeys, "10,000 keys"),
        (Jwks::Slow(Duration::from_secs(30)), "slow"),
    ] {
        let idp = TestIdp::start(answer).await;
        let cache = cache(&idp, Duration::from_secs(1));
        let started = Instant::now();
        let error = cache.refresh_now().await.unwrap_err().to_string();
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{name}: {:?}",
            started.elapsed()
        );
        assert!(error.contains(&idp.jwks_url), "{name}: {error}");
        assert_eq!(cache.held_keys(), None, "{name}");
        assert_eq!(found(&cache.key("rsa-1").await), "unavailable", "{name}");
    }
}
