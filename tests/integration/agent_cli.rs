//! The `ask` and `chat` commands against the scripted provider: JSON, streaming, a missing
//! key, and Ctrl-C in a conversation.

use crate::agent::*;
use crate::provider::{answer, streamed_answer, tool_calls, usage, Reply, ScriptedProvider};
use serde_json::Value;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// The `ask` command against the scripted provider

#[tokio::test(flavor = "multi_thread")]
async fn ask_json_prints_the_whole_response_object() {
    let (dir, url) = crate::search::open_and_staff_pages();
    let provider = ScriptedProvider::start(vec![tool_calls(
        &[("c1", "search_docs", r#"{"query":"zebra"}"#)],
        usage(20, 4),
    )])
    .await;
    provider.then_forever(answer(
        "The lobby has a zebra display [^nope].",
        usage(30, 8),
    ));
    let mut command = ask_command(dir.path(), &url, &provider);
    command.args(["ask", "What is in the lobby?", "--json"]);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(output.status.success(), "{}", crate::util::stderr(&output));
    let body: Value = serde_json::from_str(&crate::util::stdout(&output)).unwrap();
    for field in [
        "answer",
        "citations",
        "trace",
        "usage",
        "cost",
        "idk",
        "decision",
        "model",
        "retrieval",
    ] {
        assert!(body.get(field).is_some(), "{field} missing from {body}");
    }
    // The invented marker is gone; the library attributed the sentence to the lobby page.
    let shown = body["answer"].as_str().unwrap();
    assert!(
        shown.starts_with("The lobby has a zebra display.[^"),
        "{shown}"
    );
    assert_eq!(body["citations"][0]["attributed"], true);
    assert_eq!(body["retrieval"]["hallucinated_citations"], 1);
    assert!(!crate::util::stdout(&output).contains("nope"));
    assert_eq!(body["decision"], "answered");
    assert_eq!(body["usage"]["total_tokens"], 62);
    assert_eq!(body["trace"][0]["tool"], "search_docs");
    // Anonymous: the staff page is filtered out inside the search.
    assert_eq!(body["trace"][0]["summary"], "1 passages from 1 pages");
    assert_eq!(provider.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_stream_prints_tokens_as_they_arrive() {
    use std::io::Read;
    let (dir, url) = crate::search::open_and_staff_pages();
    let pieces = ["Zebras ", "are ", "in ", "the ", "lobby."];
    let provider = ScriptedProvider::start(vec![streamed_answer(
        &pieces,
        usage(5, 5),
        Duration::from_millis(300),
    )])
    .await;
    let mut command = ask_command(dir.path(), &url, &provider);
    command
        .args(["ask", "Where are zebras?", "--stream"])
        .stdout(std::process::Stdio::piped());
    // Record when each piece of output arrives.
    let arrivals = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut child = command.spawn().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut arrivals = Vec::new();
        let mut buffer = [0u8; 256];
        loop {
            let n = stdout.read(&mut buffer).unwrap();
            if n == 0 {
                break;
            }
            arrivals.push((
                started.elapsed(),
                String::from_utf8_lossy(&buffer[..n]).into_owned(),
            ));
        }
        assert!(child.wait().unwrap().success());
        arrivals
    })
    .await
    .unwrap();
    let text: String = arrivals.iter().map(|(_, t)| t.as_str()).collect();
    // The streamed text, then the sources the library attributed it to.
    assert!(text.starts_with("Zebras are in the lobby.\n"), "{text}");
    assert!(
        text.contains("Sources:") && text.contains("open.md"),
        "{text}"
    );
    // The pieces are 300 ms apart: streamed output arrives in several reads spread over time,
    // the first well before the last.
    assert!(arrivals.len() >= 3, "{arrivals:?}");
    let spread = arrivals.last().unwrap().0 - arrivals[0].0;
    assert!(spread >= Duration::from_millis(900), "{arrivals:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_without_a_key_is_a_configuration_error() {
    let (dir, url) = crate::search::open_and_staff_pages();
    let mut command = crate::util::agent(dir.path());
    command
        .env("DATABASE_URL", &url)
        .env("REQUIRE_AUTH", "false")
        .args(["ask", "anything"]);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(crate::util::stderr(&output).contains("OPENROUTER_API_KEY"));
}

/// Sends SIGINT to a child process, as Ctrl-C in its terminal would.
fn interrupt(child: &std::process::Child) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_remembers_the_conversation_and_ctrl_c_cancels_only_the_answer() {
    use std::io::Write as _;
    let (dir, url) = crate::search::open_and_staff_pages();
    let provider = ScriptedProvider::start(vec![
        streamed_answer(
            &["Zebras live ", "in the lobby."],
            usage(10, 5),
            Duration::ZERO,
        ),
        Reply::Hang(Duration::from_secs(60)),
        streamed_answer(&["Still ", "the lobby."], usage(20, 5), Duration::ZERO),
    ])
    .await;
    let history_file = dir.path().join("history.txt");
    let mut command = ask_command(dir.path(), &url, &provider);
    command
        .args(["chat", "--history"])
        .arg(&history_file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let wait_for_requests = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while provider.requests().len() < n {
            assert!(Instant::now() < deadline, "the chat never sent request {n}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    writeln!(stdin, "Where are the zebras?").unwrap();
    wait_for_requests(1);
    writeln!(stdin, "This one hangs").unwrap();
    wait_for_requests(2);
    std::thread::sleep(Duration::from_millis(200));
    interrupt(&child);
    writeln!(stdin, "And now?").unwrap();
    wait_for_requests(3);
    writeln!(stdin, "/cost").unwrap();
    writeln!(stdin, "/trace").unwrap();
    writeln!(stdin, "/reset").unwrap();
    drop(stdin); // Ctrl-D
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let out = crate::util::stdout(&output);
    assert!(
        output.status.success(),
        "{out}\n{}",
        crate::util::stderr(&output)
    );
    assert!(out.contains("Zebras live in the lobby."), "{out}");
    assert!(out.contains("(cancelled)"), "{out}");
    assert!(out.contains("Still the lobby."), "{out}");
    assert!(
        out.contains("2 answers · tokens 30 in + 10 out = 40"),
        "{out}"
    );
    // The last answer's only tool was the library's search before the model.
    assert!(out.contains("search_docs"), "{out}");
    assert!(out.contains("conversation forgotten"), "{out}");
    // The third request carries the first exchange (the question as typed, without the
    // passages it was sent with), and not the cancelled question.
    let third = provider.requests()[2].clone();
    let contents: Vec<&str> = messages(&third)
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents[0], "Where are the zebras?");
    // The answer as the response gave it, with the marker the library attributed.
    assert!(
        contents[1].starts_with("Zebras live in the lobby.[^"),
        "{contents:?}"
    );
    assert!(
        contents[2].ends_with("Question: And now?"),
        "{}",
        contents[2]
    );
    assert_eq!(contents.len(), 3);
    let history = std::fs::read_to_string(&history_file).unwrap();
    assert!(
        history.contains("This one hangs") && history.contains("/cost"),
        "{history}"
    );
}
