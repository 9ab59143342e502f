//! The production path: two `serve` replicas (the binary) over one PostgreSQL store, behind a
//! real Caddy running `deploy/Caddyfile` at `/agent`, with the simulator and the scripted
//! provider. Checked through Caddy: health, a JSON answer with a citation, an SSE answer whose
//! tokens arrive one by one while the provider is still writing, answers from both replicas,
//! and a replica stopped mid-run without a failed request.
//!
//! Caddy comes from Debian's package (`scripts/provision-caddy`, run by `scripts/test`).

use crate::provider::{
    answer, streamed_answer, streamed_tool_calls, tool_calls, usage, ScriptedProvider,
};
use crate::util::{
    agent, free_port, in_ci, repo_root, skipped, stderr, wait_until_up, write, Running,
    TestDatabase,
};
use crowdvision_agent::auth::jwt::sign_hs256;
use crowdvision_agent::sim::{self, Fixture};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SECRET: &str = "proxy-test-secret-of-at-least-32b";

/// The scripted model: `search_docs` first, then an answer citing the first passage; streamed
/// requests get the answer in five pieces 200 ms apart.
fn play(body: &Value) -> Option<crate::provider::Reply> {
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
    let results: Value = serde_json::from_str(last["content"].as_str()?).ok()?;
    let id = results["results"][0]["chunk_id"].as_str()?.to_string();
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

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_behind_caddy_answer_stream_and_survive_a_stop() {
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
    let env = |command: &mut Command| {
        command
            .env("DATABASE_URL", &db.url)
            .env("EMBEDDING_PROVIDER", "local")
            .env("LLM_BASE_URL", &provider.url)
            .env("OPENROUTER_API_KEY", "test-key")
            .env("EVAL_JWT_SECRET", SECRET)
            .env("TWIN_SERVICE_URL", &sim.url)
            .env("SENSOR_SERVICE_URL", &sim.url)
            .env("SHUTDOWN_GRACE_SECONDS", "5");
    };
    let mut ingest = agent(dir.path());
    env(&mut ingest);
    let output = ingest.args(["ingest", "docs"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));

    let ports = [free_port(), free_port()];
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
                .stderr(Stdio::null());
            Some(Running(command.spawn().unwrap()))
        })
        .collect();
    for port in ports {
        wait_until_up(&format!("http://127.0.0.1:{port}/healthz")).await;
    }
    let proxy_port = free_port();
    let _caddy = Running(
        Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(repo_root().join("deploy/Caddyfile"))
            .env("AGENT_PROXY_ADDR", format!("127.0.0.1:{proxy_port}"))
            .env(
                "AGENT_UPSTREAMS",
                format!("127.0.0.1:{} 127.0.0.1:{}", ports[0], ports[1]),
            )
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let base = format!("http://127.0.0.1:{proxy_port}/agent");
    wait_until_up(&format!("{base}/healthz")).await;

    let token = sign_hs256(
        &json!({"sub": "pat", "roles": ["business_staff"], "domains": ["acme"],
            "exp": chrono::Utc::now().timestamp() + 600}),
        SECRET.as_bytes(),
    );
    let client = crowdvision_agent::http::client_builder().build().unwrap();
    let ask = |stream: bool| {
        client
            .post(format!("{base}/ask"))
            .bearer_auth(&token)
            .json(&json!({"question": "Where is the zebra display?", "stream": stream}))
            .send()
    };

    // JSON answers with a citation, from both replicas (round robin).
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

    // A client-sent claims header is stripped by the proxy: it cannot claim to be anyone.
    let forged = client
        .post(format!("{base}/ask"))
        .header("x-gateway-claims", r#"{"sub":"x","roles":["admin"]}"#)
        .json(&json!({"question": "Is the lobby open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 401);

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
    db.drop_now().await;
}
