//! The official `mcp` Python SDK (in `target/venv`, from `scripts/provision-python`) against the
//! agent's MCP server, over stdio (`crowdvision-agent mcp`) and over Streamable HTTP (`serve` at
//! `/mcp`), with the simulator as the live-data services: the nine tools and their schemas,
//! live data as the caller, another domain's building answered like an unknown one, no
//! restricted passage for a customer, a cited `ask`, the prompts with building ids completed
//! from the caller's own buildings, and bad input refused. The client's checks
//! are in `tests/clients/mcp_client.py`; what only HTTP has (no identity refused, no session
//! held) is checked here with plain requests.

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

/// `serve` on loopback `port` in `dir` with `env`, once it answers `/healthz`.
async fn serve_on(port: u16, dir: &Path, env: &[(&str, String)]) -> Running {
    let mut serve = agent(dir);
    serve
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let running = Running(serve.spawn().unwrap());
    wait_until_up(&format!("http://127.0.0.1:{port}/healthz")).await;
    running
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
    let _serve = serve_on(port, dir.path(), &env).await;
    let base = format!("http://127.0.0.1:{port}");
    let mut settings = common;
    settings["transport"] = json!("http");
    settings["url"] = json!(format!("{base}/mcp"));
    settings["token"] = json!(customer);
    let http = run_client(&python, settings).await;
    assert_eq!(
        http["unknown_building"], stdio["unknown_building"],
        "both transports answer alike"
    );
    assert_eq!(http["completed"], stdio["completed"]);
    assert!(
        stdio["completed"]
            .as_array()
            .unwrap()
            .contains(&json!("acme-hq")),
        "{stdio}"
    );

    requests_stand_alone(&base, &customer).await;
}

/// No identity is a 401 before the protocol. No request opens a session: `initialize` hands out
/// no session id, and any caller's request is answered on its own (a session id sent along is
/// ignored, so there is nothing of one caller's another could use).
async fn requests_stand_alone(base: &str, customer: &str) {
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
    assert!(
        !opened.headers().contains_key("mcp-session-id"),
        "no session is held: {:?}",
        opened.headers()
    );
    let body: Value = opened.json().await.unwrap();
    assert_eq!(body["result"]["serverInfo"]["name"], "crowdvision-agent");

    let other = token("gus", &["business_staff"], &["globex"]);
    for session in [None, Some("made-up-session")] {
        let listed = post(Some(&other), session, list.clone()).await.unwrap();
        assert_eq!(listed.status(), 200, "{session:?}");
        assert!(listed.text().await.unwrap().contains("get_occupancy"));
    }
    // The caller's pages may be cached by the caller's client only.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    for (method, params) in [
        ("resources/list", json!({"_meta": meta})),
        (
            "resources/read",
            json!({"_meta": meta, "uri": "crowdvision://docs/open.md"}),
        ),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params});
        let mut request = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(uri) = params["uri"].as_str() {
            request = request.header("mcp-name", uri);
        }
        let response = request
            .bearer_auth(customer)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let text = response.text().await.unwrap();
        assert!(
            text.contains(r#""cacheScope":"private""#),
            "{method}: {text}"
        );
    }
    let get = client
        .get(&url)
        .bearer_auth(customer)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405, "no stream outlives a request");
}

/// An MCP host that was given only the server's address finds its way to a login: the 401 of
/// `/mcp` names the resource's metadata, the metadata names the resource and the issuer, and the
/// issuer's own metadata says where to log in. A token issued for this resource is accepted on
/// `/mcp`; a token for another audience (this service's `/ask` audience included) is not.
#[tokio::test(flavor = "multi_thread")]
async fn a_host_discovers_the_login_from_a_401_and_only_tokens_for_the_resource_pass() {
    use crate::oidc::{sign, Jwks, TestIdp};
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("docs/open.md"),
        "# Open\n\nThe zebra display.\n",
    );
    let idp = TestIdp::start(Jwks::Keys(vec!["rsa-1"])).await;
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let env: Vec<(&str, String)> = vec![
        (
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("kb.sqlite").display()),
        ),
        ("EMBEDDING_PROVIDER", "local".into()),
        ("OPENROUTER_API_KEY", "test-key".into()),
        ("OIDC_JWKS_URL", idp.jwks_url.clone()),
        ("OIDC_ISSUER", idp.issuer.clone()),
        ("OIDC_AUDIENCE", "crowdvision-agent".into()),
        ("PUBLIC_BASE_URL", format!("{base}/")),
        ("HISTORY", "false".into()),
        // Nothing answers there: `/ask` fails at the provider, after identity.
        (
            "LLM_BASE_URL",
            format!("http://127.0.0.1:{}/v1", free_port()),
        ),
        ("LLM_MAX_RETRIES", "0".into()),
    ];
    let mut ingest = agent(dir.path());
    ingest.envs(env.iter().map(|(k, v)| (*k, v)));
    assert!(ingest
        .args(["ingest", "docs"])
        .output()
        .unwrap()
        .status
        .success());
    let _serve = serve_on(port, dir.path(), &env).await;

    let client = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "host", "version": "0"}}});
    let post = |token: Option<String>| {
        let mut request = client
            .post(format!("{base}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };

    let refused = post(None).await.unwrap();
    assert_eq!(refused.status(), 401);
    let challenge = refused.headers()["www-authenticate"].to_str().unwrap();
    let metadata_url = challenge
        .strip_prefix("Bearer resource_metadata=\"")
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{challenge}"));
    assert_eq!(
        metadata_url,
        format!("{base}/.well-known/oauth-protected-resource/mcp")
    );
    let resource: Value = client
        .get(metadata_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let root: Value = client
        .get(format!("{base}/.well-known/oauth-protected-resource"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resource, root, "both forms say the same");
    assert_eq!(resource["resource"], format!("{base}/mcp"));
    assert_eq!(resource["authorization_servers"], json!([idp.issuer]));
    let issuer = resource["authorization_servers"][0].as_str().unwrap();
    let server: Value = client
        .get(format!("{issuer}/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(server["issuer"], issuer);
    assert!(server["authorization_endpoint"].is_string() && server["token_endpoint"].is_string());

    let token_for = |audience: &str| {
        let now = chrono::Utc::now().timestamp();
        sign(
            "rsa-1",
            &json!({"sub": "olga", "iss": issuer, "aud": audience, "exp": now + 600,
                "memberships": [{"domain": "acme", "role": "business_staff"}]}),
        )
    };
    let for_resource = post(Some(token_for(&format!("{base}/mcp")))).await.unwrap();
    assert_eq!(for_resource.status(), 200);
    for other in ["crowdvision-agent", "https://billing.example/mcp"] {
        let response = post(Some(token_for(other))).await.unwrap();
        assert_eq!(response.status(), 401, "{other}");
        assert!(response.headers().contains_key("www-authenticate"));
    }
    // The service's own audience still opens `/ask`; a token for `/mcp` is for `/mcp` alone.
    let ask = |token: String| {
        client
            .post(format!("{base}/ask"))
            .bearer_auth(token)
            .json(&json!({"question": "x"}))
            .send()
    };
    assert_ne!(
        ask(token_for("crowdvision-agent")).await.unwrap().status(),
        401
    );
    assert_eq!(
        ask(token_for(&format!("{base}/mcp")))
            .await
            .unwrap()
            .status(),
        401
    );
}
