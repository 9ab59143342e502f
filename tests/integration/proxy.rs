//! The production path: two `serve` replicas (the binary) over one PostgreSQL store, behind a
//! real Caddy running the shipped `deploy/Caddyfile` unmodified (environment variables only) at
//! `/agent`, with the simulator and the scripted provider. Two Caddy instances stand in front of
//! the same replicas, one per login mode: `bearer` (the replicas verify OIDC tokens against a
//! JWKS served on loopback, and dev tokens) and `gateway` (a forward-auth service on loopback
//! sets the claims header). Checked through Caddy: both logins answer (JSON and streamed), every
//! bad token kind is 401, a client's forged claims header never reaches a replica (the
//! replicas' logs show it), `/agent/metrics` is not served, key rotation and a JWKS outage,
//! both replicas answering, a replica stopped mid-run without a failed request, and where Caddy
//! and a `serve` without `BIND` listen (the kernel's table of listening sockets).
//!
//! Caddy comes from Debian's package (`scripts/provision-caddy`, run by `scripts/test`).

use crate::oidc::{self, sign, staff_claims, Jwks, TestIdp};
use crate::provider::{
    answer, streamed_answer, streamed_tool_calls, tool_calls, usage, ScriptedProvider,
};
use crate::util::{
    agent, first_passage_id, free_port, in_ci, repo_root, skipped, stderr, wait_until_up, write,
    Running, TestDatabase,
};
use base64::Engine;
use crowdvision_agent::auth::jwt::sign_hs256;
use crowdvision_agent::sim::{self, Fixture};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SECRET: &str = "proxy-test-secret-of-at-least-32b";

/// The scripted model: `search_docs` first, then an answer citing the first passage; streamed
/// requests get the answer in five pieces 200 ms apart.
pub fn play(body: &Value) -> Option<crate::provider::Reply> {
    let streaming = body["stream"] == true;
    let last = body["messages"].as_array()?.last()?.clone();
    if last["role"] != "tool" {
        let call = [("c1", "search_docs", r#"{"query":"zebra display"}"#)];
        return Some(if streaming {
            streamed_tool_calls(&call, 8, usage(10, 2))
        } else {
            tool_calls(&call, usage(10, 2))
        });
    }
    let id = first_passage_id(last["content"].as_str()?)?;
    Some(if streaming {
        let marker = format!(" [^{id}].");
        streamed_answer(
            &["The zebra ", "display ", "is in ", "the lobby", &marker],
            usage(20, 8),
            Duration::from_millis(200),
        )
    } else {
        answer(
            &format!("The zebra display is in the lobby [^{id}]."),
            usage(20, 8),
        )
    })
}

/// A forward-auth gateway on loopback: `Authorization: Bearer gw-pat` is Pat of Acme's staff
/// (answered 204 with `X-Gateway-Claims`); anything else is 401.
async fn start_gateway() -> String {
    let app = axum::Router::new().route(
        "/verify",
        axum::routing::get(|headers: axum::http::HeaderMap| async move {
            use axum::response::IntoResponse;
            let login = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            if login != "Bearer gw-pat" {
                return (axum::http::StatusCode::UNAUTHORIZED, "log in first").into_response();
            }
            let claims =
                json!({"sub": "pat", "memberships": [{"domain": "acme", "role": "business_staff"}]});
            let value = base64::engine::general_purpose::STANDARD.encode(claims.to_string());
            (
                axum::http::StatusCode::NO_CONTENT,
                [("x-gateway-claims", value)],
            )
                .into_response()
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

/// The local addresses listening on TCP `port`, from the kernel's socket tables.
fn listening_on(port: u16) -> Vec<String> {
    let mut found = Vec::new();
    for (table, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state)) = (fields.get(1), fields.get(3)) else {
                continue;
            };
            let Some((address, port_hex)) = local.split_once(':') else {
                continue;
            };
            if *state != "0A" || u16::from_str_radix(port_hex, 16).ok() != Some(port) {
                continue;
            }
            found.push(if v6 {
                format!("[{address}]")
            } else {
                let n = u32::from_str_radix(address, 16).unwrap();
                std::net::Ipv4Addr::from(n.swap_bytes()).to_string()
            });
        }
    }
    found
}

pub fn start_caddy(
    dir: &std::path::Path,
    port: u16,
    upstreams: &str,
    extra: &[(&str, &str)],
) -> Running {
    let mut command = Command::new("caddy");
    command
        .args(["run", "--adapter", "caddyfile", "--config"])
        .arg(repo_root().join("deploy/Caddyfile"))
        .env("AGENT_PROXY_PORT", port.to_string())
        .env("AGENT_UPSTREAMS", upstreams)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir)
        .env("XDG_CONFIG_HOME", dir)
        .env_remove("AGENT_PROXY_BIND")
        .env_remove("AGENT_AUTH")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (name, value) in extra {
        command.env(name, value);
    }
    Running(command.spawn().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shipped_caddyfile_logs_in_both_ways_refuses_bad_tokens_and_survives_a_stop() {
    if Command::new("caddy").arg("version").output().is_err() {
        assert!(
            !in_ci(),
            "caddy is not installed and CI=true (scripts/provision-caddy)"
        );
        skipped(
            "proxy test",
            "caddy is not installed (scripts/provision-caddy installs it)",
        );
        return;
    }
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("docs/open.md"),
        "# Open\n\nThe lobby zebra display.\n",
    );
    let provider = ScriptedProvider::with_rule(play).await;
    let fixture = Fixture::load(&repo_root().join("datasets/sim/campus.yaml")).unwrap();
    let sim = sim::start(fixture, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let idp = TestIdp::start(Jwks::Keys(vec!["rsa-1", "ec-1"])).await;
    let gateway = start_gateway().await;
    let env = |command: &mut Command| {
        command
            .env("DATABASE_URL", &db.url)
            .env("EMBEDDING_PROVIDER", "local")
            .env("LLM_BASE_URL", &provider.url)
            .env("SEARCH_AGAIN", "true")
            .env("OPENROUTER_API_KEY", "test-key")
            .env("EVAL_JWT_SECRET", SECRET)
            .env("OIDC_JWKS_URL", &idp.jwks_url)
            .env("OIDC_ISSUER", oidc::ISSUER)
            .env("OIDC_AUDIENCE", oidc::AUDIENCE)
            // These replicas also sit behind the gateway-mode Caddy: told to read its header.
            .env("TRUST_GATEWAY_HEADER", "true")
            .env("TWIN_SERVICE_URL", &sim.url)
            .env("SENSOR_SERVICE_URL", &sim.url)
            .env("RUST_LOG", "info,crowdvision_agent::server=debug")
            .env("SHUTDOWN_GRACE_SECONDS", "5");
    };
    let mut ingest = agent(dir.path());
    env(&mut ingest);
    let output = ingest.args(["ingest", "docs"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));

    let ports = [free_port(), free_port()];
    let logs: Vec<std::path::PathBuf> = (1..=2)
        .map(|i| dir.path().join(format!("replica-{i}.log")))
        .collect();
    let mut replicas: Vec<Option<Running>> = ports
        .iter()
        .enumerate()
        .map(|(i, port)| {
            let mut command = agent(dir.path());
            env(&mut command);
            command
                .env("REPLICA_NAME", format!("replica-{}", i + 1))
                .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&logs[i]).unwrap());
            Some(Running(command.spawn().unwrap()))
        })
        .collect();
    for port in ports {
        wait_until_up(&format!("http://127.0.0.1:{port}/healthz")).await;
    }
    let upstreams = format!("127.0.0.1:{} 127.0.0.1:{}", ports[0], ports[1]);
    let (bearer_port, gateway_port) = (free_port(), free_port());
    let _bearer_caddy = start_caddy(dir.path(), bearer_port, &upstreams, &[]);
    let _gateway_caddy = start_caddy(
        dir.path(),
        gateway_port,
        &upstreams,
        &[("AGENT_AUTH", "gateway"), ("AGENT_FORWARD_AUTH", &gateway)],
    );
    let base = format!("http://127.0.0.1:{bearer_port}/agent");
    let gateway_base = format!("http://127.0.0.1:{gateway_port}/agent");
    wait_until_up(&format!("{base}/healthz")).await;
    wait_until_up(&format!("{gateway_base}/healthz")).await;

    // Caddy as configured by default listens on loopback only.
    assert_eq!(listening_on(bearer_port), ["127.0.0.1"]);

    let token = sign_hs256(
        &json!({"sub": "pat", "roles": ["business_staff"], "domains": ["acme"],
            "exp": chrono::Utc::now().timestamp() + 600}),
        SECRET.as_bytes(),
    );
    let client = crowdvision_agent::http::client_builder().build().unwrap();
    let post = |url: String, authorization: Option<String>, stream: bool| {
        let mut request = client
            .post(url)
            .json(&json!({"question": "Where is the zebra display?", "stream": stream}));
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        request.send()
    };
    let ask_as = |authorization: String| post(format!("{base}/ask"), Some(authorization), false);
    let ask = |stream: bool| {
        post(
            format!("{base}/ask"),
            Some(format!("Bearer {token}")),
            stream,
        )
    };

    // Dev-token JSON answers with a citation, from both replicas (round robin).
    let mut replicas_seen = BTreeSet::new();
    for _ in 0..4 {
        let response = ask(false).await.unwrap();
        assert_eq!(response.status(), 200);
        replicas_seen.insert(
            response.headers()["x-agent-replica"]
                .to_str()
                .unwrap()
                .to_string(),
        );
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["citations"][0]["source"], "open.md", "{body}");
    }
    assert_eq!(replicas_seen.len(), 2, "{replicas_seen:?}");

    // OIDC bearer tokens, RS256 and ES256, JSON and streamed.
    for kid in ["rsa-1", "ec-1"] {
        let bearer = format!("Bearer {}", sign(kid, &staff_claims("olga")));
        let response = ask_as(bearer.clone()).await.unwrap();
        assert_eq!(response.status(), 200, "{kid}");
        let streamed = post(format!("{base}/ask"), Some(bearer), true)
            .await
            .unwrap();
        assert_eq!(streamed.status(), 200, "{kid}");
        let text = streamed.text().await.unwrap();
        assert!(
            text.contains("event: token") && text.contains("event: done"),
            "{text}"
        );
    }

    // Every bad token kind is 401.
    let with = |change: Value| {
        let mut claims = staff_claims("olga");
        claims
            .as_object_mut()
            .unwrap()
            .extend(change.as_object().unwrap().clone());
        claims
    };
    let good = sign("rsa-1", &staff_claims("olga"));
    let parts: Vec<&str> = good.split('.').collect();
    let b64url = |text: String| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text);
    let admin_payload = b64url(with(json!({"roles": ["admin"]})).to_string());
    let bad_tokens = [
        (
            "forged payload",
            format!("{}.{admin_payload}.{}", parts[0], parts[2]),
        ),
        (
            "expired",
            sign("rsa-1", &with(json!({"exp": oidc::now() - 3600}))),
        ),
        (
            "not yet valid",
            sign("rsa-1", &with(json!({"nbf": oidc::now() + 3600}))),
        ),
        (
            "wrong issuer",
            sign("rsa-1", &with(json!({"iss": "https://evil.example"}))),
        ),
        (
            "wrong audience",
            sign("rsa-1", &with(json!({"aud": "billing"}))),
        ),
        (
            "alg none",
            format!(
                "{}.{}.",
                b64url(r#"{"alg":"none","kid":"rsa-1"}"#.to_string()),
                b64url(staff_claims("olga").to_string())
            ),
        ),
        (
            "HS256 with the public key's kid",
            format!(
                "{}.{}.c2ln",
                b64url(r#"{"alg":"HS256","kid":"rsa-1"}"#.to_string()),
                b64url(staff_claims("olga").to_string())
            ),
        ),
        ("unknown kid", sign("rsa-2", &staff_claims("olga"))),
        (
            "100 KiB",
            format!("{}.{}.{}", parts[0], "A".repeat(100 * 1024), parts[2]),
        ),
    ];
    for (name, bad) in &bad_tokens {
        let response = ask_as(format!("Bearer {bad}")).await.unwrap();
        assert_eq!(response.status(), 401, "{name}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unauthenticated", "{name}: {body}");
    }
    assert_eq!(
        post(format!("{base}/ask"), None, false)
            .await
            .unwrap()
            .status(),
        401
    );

    // A client's claims header is stripped by the proxy: it cannot claim to be anyone.
    let mallory = json!({"sub": "mallory", "roles": ["admin"]}).to_string();
    let forged = client
        .post(format!("{base}/ask"))
        .header("x-gateway-claims", &mallory)
        .json(&json!({"question": "Is the lobby open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 401);

    // /metrics is the replicas' own, never served through the proxy.
    for proxy in [&base, &gateway_base] {
        let response = client.get(format!("{proxy}/metrics")).send().await.unwrap();
        assert_eq!(response.status(), 404, "{proxy}");
        assert!(!response.text().await.unwrap().contains("agent_"));
    }
    let direct = client
        .get(format!("http://127.0.0.1:{}/metrics", ports[0]))
        .send()
        .await
        .unwrap();
    assert_eq!(direct.status(), 200);

    // Gateway mode: the forward-auth service's claims reach the replica, a client's never do,
    // and the claims win over the Authorization header the gateway passed along.
    let login = Some("Bearer gw-pat".to_string());
    let response = post(format!("{gateway_base}/ask"), login.clone(), false)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let streamed = post(format!("{gateway_base}/ask"), login.clone(), true)
        .await
        .unwrap();
    assert_eq!(streamed.status(), 200);
    assert!(streamed.text().await.unwrap().contains("event: done"));
    assert_eq!(
        post(format!("{gateway_base}/ask"), None, false)
            .await
            .unwrap()
            .status(),
        401
    );
    let forged_with_login = client
        .post(format!("{gateway_base}/ingest"))
        .header("authorization", "Bearer gw-pat")
        .header("x-gateway-claims", &mallory)
        .json(&json!({"roots": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(forged_with_login.status(), 403, "pat is not an admin");
    let forged_alone = client
        .post(format!("{gateway_base}/ask"))
        .header("x-gateway-claims", &mallory)
        .json(&json!({"question": "Is the lobby open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(forged_alone.status(), 401);

    // Key rotation: rsa-2 replaces rsa-1. Both replicas fetch the set again on the unknown
    // kid and then accept rsa-2 and refuse rsa-1.
    idp.answer(Jwks::Keys(vec!["rsa-2", "ec-1"]));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let rotated = format!("Bearer {}", sign("rsa-2", &staff_claims("olga")));
    let retired = format!("Bearer {}", sign("rsa-1", &staff_claims("olga")));
    let mut answered_by = BTreeSet::new();
    for _ in 0..2 {
        let response = ask_as(rotated.clone()).await.unwrap();
        assert_eq!(response.status(), 200);
        answered_by.insert(
            response.headers()["x-agent-replica"]
                .to_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(answered_by.len(), 2, "{answered_by:?}");
    for _ in 0..2 {
        assert_eq!(ask_as(retired.clone()).await.unwrap().status(), 401);
    }
    // The identity provider goes down: the keys held keep working.
    idp.answer(Jwks::Down);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for _ in 0..2 {
        assert_eq!(ask_as(rotated.clone()).await.unwrap().status(), 200);
    }

    // Streamed: token events arrive one by one while the provider is still writing.
    let mut response = ask(true).await.unwrap();
    assert_eq!(response.status(), 200);
    let started = Instant::now();
    let mut token_times = Vec::new();
    let mut text = String::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        let piece = String::from_utf8_lossy(&chunk).to_string();
        for _ in 0..piece.matches("event: token").count() {
            token_times.push(started.elapsed());
        }
        text.push_str(&piece);
    }
    assert!(text.contains("event: done"), "{text}");
    assert!(token_times.len() >= 5, "{token_times:?}");
    let spread = *token_times.last().unwrap() - token_times[0];
    assert!(
        spread >= Duration::from_millis(600),
        "tokens were buffered: {token_times:?}"
    );

    // One replica stops mid-run; every request still succeeds through Caddy.
    let mut statuses = Vec::new();
    for i in 0..8 {
        if i == 3 {
            let stopped = replicas[1].take().unwrap();
            let pid = stopped.0.id().to_string();
            let _ = Command::new("kill").args(["-TERM", &pid]).status();
            drop(stopped);
        }
        statuses.push(ask(false).await.unwrap().status().as_u16());
    }
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    drop(replicas);

    // The replicas' logs: who asked, and why each refusal was refused; Mallory never arrived,
    // and no token or claims text was written.
    let log: String = logs
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    assert!(
        log.contains("request identified") && log.contains("pat"),
        "{log}"
    );
    assert!(log.contains("no credentials"), "{log}");
    assert!(log.contains("signed by a key not in the JWKS"), "{log}");
    assert!(log.contains("status=403"), "{log}");
    assert!(
        !log.contains("mallory"),
        "a forged claims header reached a replica"
    );
    assert!(!log.contains(&good[..40]), "a token was logged");
    db.drop_now().await;
}

/// `serve` without `BIND` listens on loopback only, and with an OIDC key set it cannot read
/// yet, a bearer token is told to retry (503 + Retry-After), never refused or failed, and
/// `/readyz` says not ready. In bearer mode by default, a claims header identifies nobody.
#[tokio::test(flavor = "multi_thread")]
async fn serve_binds_loopback_by_default_and_waits_for_an_unreadable_jwks() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let dead_jwks = format!("http://127.0.0.1:{}/jwks", free_port());
    // A migrated store, so that `/readyz` has only the identity provider to complain about.
    let migrated = agent(dir.path())
        .env("DATABASE_URL", &db.url)
        .env("EMBEDDING_PROVIDER", "local")
        .args(["db", "migrate"])
        .output()
        .unwrap();
    assert!(migrated.status.success(), "{}", stderr(&migrated));
    let mut command = agent(dir.path());
    command
        .env("DATABASE_URL", &db.url)
        .env("EMBEDDING_PROVIDER", "local")
        .env("OPENROUTER_API_KEY", "test-key")
        .env("OIDC_JWKS_URL", &dead_jwks)
        .env("OIDC_ISSUER", oidc::ISSUER)
        .env("OIDC_AUDIENCE", oidc::AUDIENCE)
        .env_remove("BIND")
        .args(["serve"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _serve = Running(command.spawn().unwrap());
    wait_until_up("http://127.0.0.1:3000/healthz").await;
    assert_eq!(listening_on(3000), ["127.0.0.1"]);

    let client = crowdvision_agent::http::client_builder().build().unwrap();
    let token = sign("rsa-1", &staff_claims("olga"));
    let started = Instant::now();
    let response = client
        .post("http://127.0.0.1:3000/ask")
        .bearer_auth(&token)
        .json(&json!({"question": "Where is the zebra display?"}))
        .send()
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(response.status(), 503);
    assert!(response.headers().contains_key("retry-after"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "identity_unavailable", "{body}");

    // Not ready while no key can be read, and saying why.
    let ready = client
        .get("http://127.0.0.1:3000/readyz")
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    let body: Value = ready.json().await.unwrap();
    assert_eq!(body["error"]["code"], "identity_not_ready", "{body}");

    // With OIDC configured and TRUST_GATEWAY_HEADER left alone, a claims header sent straight
    // to the replica identifies nobody.
    let forged = client
        .post("http://127.0.0.1:3000/ask")
        .header("x-gateway-claims", r#"{"sub":"mallory","roles":["admin"]}"#)
        .json(&json!({"question": "Where is the zebra display?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 401);
    db.drop_now().await;
}
