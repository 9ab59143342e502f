//! The official `openai` Python SDK (in `target/venv`, from `scripts/provision-python`) against
//! `serve`'s OpenAI-compatible endpoint: models, a whole and a streamed completion with the
//! same text, usage, a follow-up, and its own error types for 401, 400, 413, 429 and 503.
//! The client's checks are in `tests/clients/openai_client.py`.

use crate::provider::{answer, last_user_text, streamed_answer, usage, Reply, ScriptedProvider};
use crate::util::{
    agent, client_python, free_port, repo_root, stderr, wait_until_up, write, Running,
};
use crowdvision_agent::auth::jwt::sign_hs256;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::Duration;

const SECRET: &str = "sdk-test-secret-of-at-least-32-bytes";

/// The scripted model: answers citing the first passage of the request, streamed in pieces
/// when asked; a question to "take your time" waits three seconds first.
fn rule(body: &Value) -> Option<Reply> {
    let question = last_user_text(body);
    let start = question.find("[^")? + 2;
    let id = &question[start..start + question[start..].find(']')?];
    let text = if question.contains("where exactly") {
        format!("By the door of the lobby [^{id}].")
    } else {
        format!("The zebra display is in the lobby [^{id}].")
    };
    let reply = if body["stream"] == true {
        let cut = text.len() / 3;
        let (a, rest) = text.split_at(cut);
        let (b, c) = rest.split_at(cut);
        streamed_answer(&[a, b, c], usage(20, 8), Duration::from_millis(50))
    } else {
        answer(&text, usage(20, 8))
    };
    Some(if question.contains("Take your time") {
        Reply::Delay(Duration::from_secs(3), Box::new(reply))
    } else {
        reply
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_sdk_talks_to_the_agent_as_to_any_openai_server() {
    let Some(python) = client_python("SDK test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("docs/open.md"),
        "# Open\n\nThe zebra display stands in the lobby, by the door.\n",
    );
    let provider = ScriptedProvider::with_rule(rule).await;
    let database = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
    let env = |command: &mut Command| {
        command
            .env("DATABASE_URL", &database)
            .env("EMBEDDING_PROVIDER", "local")
            .env("LLM_BASE_URL", &provider.url)
            .env("OPENROUTER_API_KEY", "test-key")
            .env("ANSWER_MODEL", "scripted/model")
            .env("EVAL_JWT_SECRET", SECRET)
            .env("HISTORY", "false");
    };
    let mut ingest = agent(dir.path());
    env(&mut ingest);
    let output = ingest.args(["ingest", "docs"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let serve = |extra: &[(&str, &str)]| {
        let port = free_port();
        let mut command = agent(dir.path());
        env(&mut command);
        for (name, value) in extra {
            command.env(name, value);
        }
        command
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        (
            format!("http://127.0.0.1:{port}"),
            Running(command.spawn().unwrap()),
        )
    };
    let (base, _main) = serve(&[]);
    let (limited, _limited) = serve(&[("REQUESTS_PER_MINUTE", "1")]);
    let (busy, _busy) = serve(&[("MAX_IN_FLIGHT", "1")]);
    for url in [&base, &limited, &busy] {
        wait_until_up(&format!("{url}/healthz")).await;
    }
    let token = sign_hs256(
        &json!({"sub": "pat", "roles": ["business_staff"], "domains": ["acme"],
            "exp": chrono::Utc::now().timestamp() + 3600}),
        SECRET.as_bytes(),
    );
    let script = repo_root().join("tests/clients/openai_client.py");
    let run = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .args([&base, &token, &limited, &busy])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        run.status.success(),
        "the openai SDK client failed:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        stderr(&run)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(report["answer"].as_str().unwrap().contains("[^"));
    // The follow-up reached the model with the conversation, and without the client's system
    // message.
    let follow_up = provider
        .requests()
        .into_iter()
        .find(|body| last_user_text(body).contains("where exactly"))
        .expect("the follow-up reached the model");
    let messages = follow_up["messages"].as_array().unwrap();
    assert!(messages.iter().any(|m| m["role"] == "assistant"
        && m["content"]
            .as_str()
            .unwrap_or_default()
            .contains("zebra display is in the lobby")));
    assert!(!follow_up.to_string().contains("pirate"));
    assert!(report["follow_up"]
        .as_str()
        .unwrap()
        .contains("By the door"));
}
