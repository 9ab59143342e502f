//! Many replicas, one truth: two `serve` replicas over one PostgreSQL store behind the shipped
//! `deploy/Caddyfile` (round robin), driven by clients as people run them. The official `mcp`
//! SDK keeps one connection for dozens of calls while Caddy spreads them over both replicas,
//! and one replica is stopped halfway.

use crate::provider::ScriptedProvider;
use crate::proxy::{play, start_caddy};
use crate::util::{
    agent, client_python, free_port, in_ci, repo_root, skipped, stderr, wait_until_up, write,
    Running, TestDatabase,
};
use crowdvision_agent::auth::jwt::sign_hs256;
use crowdvision_agent::sim::{self, Fixture};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const SECRET: &str = "replicas-test-secret-of-32-bytes!";

/// Two replicas and a Caddy in front of them, with what they answer from.
struct Deployment {
    base: String,
    replicas: Vec<Option<Running>>,
    db: TestDatabase,
    _caddy: Running,
    _dir: tempfile::TempDir,
    _sim: sim::SimHandle,
    _provider: ScriptedProvider,
}

impl Deployment {
    /// `None` where Caddy or PostgreSQL is missing outside CI (skipped, and said so).
    async fn start(extra_env: &[(&str, &str)]) -> Option<Deployment> {
        if Command::new("caddy").arg("version").output().is_err() {
            assert!(!in_ci(), "caddy is not installed and CI=true");
            skipped(
                "replica tests",
                "caddy is not installed (scripts/provision-caddy)",
            );
            return None;
        }
        let db = TestDatabase::create().await?;
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
        let env = |command: &mut Command| {
            command
                .env("DATABASE_URL", &db.url)
                .env("EMBEDDING_PROVIDER", "local")
                .env("LLM_BASE_URL", &provider.url)
                .env("SEARCH_AGAIN", "true")
                .env("OPENROUTER_API_KEY", "test-key")
                .env("EVAL_JWT_SECRET", SECRET)
                .env("TWIN_SERVICE_URL", &sim.url)
                .env("SENSOR_SERVICE_URL", &sim.url)
                .env("HISTORY", "false")
                .env("SHUTDOWN_GRACE_SECONDS", "5");
            for (name, value) in extra_env {
                command.env(name, value);
            }
        };
        let mut ingest = agent(dir.path());
        env(&mut ingest);
        let output = ingest.args(["ingest", "docs"]).output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let ports = [free_port(), free_port()];
        let replicas = ports
            .iter()
            .enumerate()
            .map(|(i, port)| {
                let mut command = agent(dir.path());
                env(&mut command);
                command
                    .env("REPLICA_NAME", format!("replica-{}", i + 1))
                    .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                Some(Running(command.spawn().unwrap()))
            })
            .collect();
        for port in ports {
            wait_until_up(&format!("http://127.0.0.1:{port}/healthz")).await;
        }
        let upstreams = format!("127.0.0.1:{} 127.0.0.1:{}", ports[0], ports[1]);
        let proxy_port = free_port();
        let caddy = start_caddy(dir.path(), proxy_port, &upstreams, &[]);
        let base = format!("http://127.0.0.1:{proxy_port}/agent");
        wait_until_up(&format!("{base}/healthz")).await;
        Some(Deployment {
            base,
            replicas,
            db,
            _caddy: caddy,
            _dir: dir,
            _sim: sim,
            _provider: provider,
        })
    }

    /// Stops replica `index` as an orchestrator would (SIGTERM, then waits for it).
    fn stop(&mut self, index: usize) {
        if let Some(stopped) = self.replicas[index].take() {
            let pid = stopped.0.id().to_string();
            let _ = Command::new("kill").args(["-TERM", &pid]).status();
            drop(stopped);
        }
    }
}

/// A development token of Acme's staff.
fn staff_token(sub: &str) -> String {
    sign_hs256(
        &json!({"sub": sub, "roles": ["business_staff"], "domains": ["acme"],
            "exp": chrono::Utc::now().timestamp() + 3600}),
        SECRET.as_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_sdk_connection_is_answered_by_both_replicas_and_outlives_one() {
    let Some(python) = client_python("MCP through the proxy") else {
        return;
    };
    let Some(mut deployment) = Deployment::start(&[]).await else {
        return;
    };
    let settings = json!({
        "transport": "http",
        "url": format!("{}/mcp", deployment.base),
        "token": staff_token("pat"),
        "public": "zebra",
        "rounds": 8,
        "ask_every": 2,
        "pause_after": 4,
    });
    let mut client = Command::new(&python)
        .arg(repo_root().join("tests/clients/mcp_client.py"))
        .arg(settings.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(client.stdout.take().unwrap()).lines();
    let paused = tokio::task::spawn_blocking(move || {
        let line = lines.next().and_then(Result::ok);
        (line, lines)
    });
    let (line, lines) = paused.await.unwrap();
    assert_eq!(line.as_deref(), Some("PAUSED"), "the client stopped early");
    // Halfway through the connection one replica goes away; the rest lands on the other.
    deployment.stop(1);
    client.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let rest: Vec<String> =
        tokio::task::spawn_blocking(move || lines.map_while(Result::ok).collect())
            .await
            .unwrap();
    let status = client.wait().unwrap();
    let mut errors = String::new();
    std::io::Read::read_to_string(&mut client.stderr.take().unwrap(), &mut errors).unwrap();
    assert!(status.success(), "{rest:?}\n{errors}");
    let report: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(
        report,
        json!({"tools": 24, "asks": 4}),
        "every call answered"
    );
    deployment.db.drop_now().await;
}

/// One caller's flood spread by round robin over two replicas is held to the quota in total:
/// the replicas share one count in PostgreSQL, so five requests a minute are five, not ten.
/// Another caller is not touched by it.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_over_two_replicas_gets_exactly_the_quota_in_total() {
    let Some(deployment) = Deployment::start(&[("REQUESTS_PER_MINUTE", "5")]).await else {
        return;
    };
    let client = crowdvision_agent::http::client_builder().build().unwrap();
    let ask = |token: String| {
        client
            .post(format!("{}/ask", deployment.base))
            .bearer_auth(token)
            .json(&json!({"question": "Where is the zebra display?"}))
            .send()
    };
    let flood = staff_token("flood");
    let mut statuses = Vec::new();
    let mut replicas_seen = std::collections::BTreeSet::new();
    for _ in 0..16 {
        let response = ask(flood.clone()).await.unwrap();
        if let Some(replica) = response.headers().get("x-agent-replica") {
            replicas_seen.insert(replica.to_str().unwrap().to_string());
        }
        let status = response.status().as_u16();
        if status == 429 {
            assert!(response.headers().contains_key("retry-after"));
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"]["code"], "rate_limited", "{body}");
        }
        statuses.push(status);
    }
    assert_eq!(
        replicas_seen.len(),
        2,
        "both replicas served: {replicas_seen:?}"
    );
    let admitted = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((admitted, refused), (5, 11), "{statuses:?}");
    assert_eq!(ask(staff_token("quiet")).await.unwrap().status(), 200);
    deployment.db.drop_now().await;
}
