//! The official `mcp` Python SDK (in `target/venv`, from `scripts/provision-python`) against the
//! agent's MCP server, over stdio (`crowdvision-agent mcp`) and over Streamable HTTP (`serve` at
//! `/mcp`), with the simulator as the live-data services: the nine tools and their schemas,
//! live data as the caller, another domain's building answered like an unknown one, no
//! restricted passage for a customer, a cited `ask`, and bad input refused. The client's checks
//! are in `tests/clients/mcp_client.py`; the HTTP-only refusals (no identity, a session that is
//! not the caller's) are checked here with plain requests.

use crate::provider::{answer, last_user_text, usage, Reply, ScriptedProvider};
use crate::util::{
    agent, client_python, free_port, repo_root, stderr, wait_until_up, write, Running,
};
use crowdvision_agent::auth::jwt::sign_hs256;
use crowdvision_agent::sim::{self, Fixture};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};

const SECRET: &str = "mcp-test-secret-of-at-least-32-bytes";
/// A word only the staff document holds.
const STAFF_WORD: &str = "quokkamaintenance";
/// A word of the public document.
const PUBLIC_WORD: &str = "zebra";

/// The scripted model: answers citing the first passage of the request.
fn rule(body: &Value) -> Option<Reply> {
    let question = last_user_text(body);
    let start = question.find("[^")? + 2;
    let id = &question[start..start + question[start..].find(']')?];
    Some(answer(
        &format!("The zebra display is in the lobby [^{id}]."),
        usage(20, 8),
    ))
}

fn token(sub: &str, roles: &[&str], domains: &[&str]) -> String {
    sign_hs256(
        &json!({"sub": sub, "roles": roles, "domains": domains,
            "exp": chrono::Utc::now().timestamp() + 3600}),
        SECRET.as_bytes(),
    )
}

/// Runs the SDK client with `settings`, returns its report.
async fn run_client(python: &Path, settings: Value) -> Value {
    let script = repo_root().join("tests/clients/mcp_client.py");
    let python = python.to_path_buf();
    let run = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(settings.to_string())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        run.status.success(),
        "the mcp SDK client failed:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        stderr(&run)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mcp_sdk_uses_the_agent_over_stdio_and_streamable_http() {
    let Some(python) = client_python("MCP test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("docs/open.md"),
        "# Open\n\nThe zebra display stands in the lobby, by the door.\n",
    );
    write(
        &dir.path().join("docs/staff.md"),
        &format!(
            "---\npermissions: [business_staff]\n---\n# Upkeep\n\nThe {STAFF_WORD} schedule \
             is every Tuesday.\n"
        ),
    );
    let fixture = Fixture::load(&repo_root().join("datasets/sim/campus.yaml")).unwrap();
    let sim = sim::start(fixture, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let provider = ScriptedProvider::with_rule(rule).await;
    let env: Vec<(&str, String)> = vec![
        (
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("kb.sqlite").display()),
        ),
        ("EMBEDDING_PROVIDER", "local".into()),
        ("LLM_BASE_URL", provider.url.clone()),
        ("OPENROUTER_API_KEY", "test-key".into()),
        ("ANSWER_MODEL", "scripted/model".into()),
        ("EVAL_JWT_SECRET", SECRET.into()),
        ("TWIN_SERVICE_URL", sim.url.clone()),
        ("SENSOR_SERVICE_URL", sim.url.clone()),
        ("HISTORY", "false".into()),
    ];
    let mut ingest = agent(dir.path());
    ingest.envs(env.iter().map(|(k, v)| (*k, v)));
    let output = ingest.args(["ingest", "docs"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let customer = token("cora", &["standard_customer"], &["acme"]);
    let common = json!({"secret": STAFF_WORD, "public": PUBLIC_WORD});

    // stdio: the SDK starts the binary as a host would.
    let mut settings = common.clone();
    settings["transport"] = json!("stdio");
    settings["command"] = json!(env!("CARGO_BIN_EXE_crowdvision-agent"));
    settings["args"] = json!(["--token", customer, "mcp"]);
    settings["env"] = json!(env
        .iter()
        .cloned()
        .collect::<std::collections::HashMap<_, _>>());
    settings["cwd"] = json!(dir.path());
    let stdio = run_client(&python, settings).await;
    assert_eq!(stdio["tools"].as_array().unwrap().len(), 9);

    // Streamable HTTP on serve.
    let port = free_port();
    let mut serve = agent(dir.path());
    serve
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _serve = Running(serve.spawn().unwrap());
    let base = format!("http://127.0.0.1:{port}");
    wait_until_up(&format!("{base}/healthz")).await;
    let mut settings = common;
    settings["transport"] = json!("http");
    settings["url"] = json!(format!("{base}/mcp"));
    settings["token"] = json!(customer);
    let http = run_client(&python, settings).await;
    assert_eq!(
        http["unknown_building"], stdio["unknown_building"],
        "both transports answer alike"
    );

    sessions_belong_to_their_caller(&base, &customer).await;
}

/// No identity is a 401 before the protocol; a session is usable only by the caller who opened
/// it, and any other id, foreign or made up, is the transport's own 404.
async fn sessions_belong_to_their_caller(base: &str, customer: &str) {
    let client = reqwest::Client::new();
    let url = format!("{base}/mcp");
    let post = |bearer: Option<&str>, session: Option<&str>, body: Value| {
        let mut request = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});

    let anonymous = post(None, None, initialize.clone()).await.unwrap();
    assert_eq!(anonymous.status(), 401);

    let opened = post(Some(customer), None, initialize).await.unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let _ = opened.bytes().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let sent = post(Some(customer), Some(&session), initialized)
        .await
        .unwrap();
    assert!(sent.status().is_success(), "{}", sent.status());

    let own = post(Some(customer), Some(&session), list.clone())
        .await
        .unwrap();
    assert_eq!(own.status(), 200);
    assert!(own.text().await.unwrap().contains("get_occupancy"));

    let other = token("gus", &["business_staff"], &["globex"]);
    let foreign = post(Some(&other), Some(&session), list.clone())
        .await
        .unwrap();
    let made_up = post(Some(&other), Some("not-a-session"), list)
        .await
        .unwrap();
    assert_eq!(foreign.status(), 404);
    assert_eq!(made_up.status(), 404);
    assert_eq!(
        foreign.text().await.unwrap(),
        made_up.text().await.unwrap(),
        "a foreign session looks like no session"
    );
}
