//! `eval` as a user runs it: the binary against the scripted provider (which plays both the
//! answer model and the judge, deciding each reply from the request, since cases run
//! concurrently) and the simulator started by `--sim`. Every status, exit code, report format
//! (JUnit parsed as XML), the baseline diff, repeats and the sweep matrix.

use crate::provider::{answer, tool_calls, usage, Reply, ScriptedProvider};
use crate::util::{agent, first_passage_id, repo_root, stderr, stdout, write};
use crowdvision_agent::agent::tools::STANDARD_TOOL_NAMES;
use crowdvision_agent::agent::verdict::decision::IDK_MARKER;
use crowdvision_agent::eval::dataset;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The question of a chat request: its last user message, without the passages the library
/// sends before it.
fn question(body: &Value) -> String {
    let text = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    text.rsplit_once("Question: ")
        .map_or(text, |(_, question)| question)
        .to_string()
}

/// The content of the last message when it is a tool result.
fn tool_result(body: &Value) -> Option<String> {
    let last = body["messages"].as_array()?.last()?;
    (last["role"] == "tool").then(|| last["content"].as_str().unwrap_or_default().to_string())
}

/// The judge: its verdict is chosen by words in the rubric. "judge-garbled" never answers
/// with JSON; "judge-garbled-once" only on the first attempt (a retry carries the bad reply).
fn judge(body: &Value) -> Reply {
    let text = body["messages"][1]["content"].as_str().unwrap_or_default();
    let retry = body["messages"].as_array().map_or(0, Vec::len) > 2;
    let reply = if text.contains("judge-garbled-once") && retry {
        checklist("fine after all", true)
    } else if text.contains("judge-garbled") {
        "I think it passes.".to_string()
    } else if text.contains("judge-fail") {
        checklist("writes no poem", false)
    } else {
        checklist("declines in one sentence", true)
    };
    answer(&reply, usage(50, 5))
}

/// A judge's checklist of one requirement.
fn checklist(requirement: &str, met: bool) -> String {
    json!({"requirements": [{"requirement": requirement, "evidence": "", "met": met}]}).to_string()
}

/// The answer model, keyed by the question's first word.
fn play(flaky_counter: &AtomicUsize, body: &Value) -> Option<Reply> {
    if body.get("response_format").is_some() {
        return Some(judge(body));
    }
    let question = question(body);
    let result = tool_result(body);
    let model = body["model"].as_str().unwrap_or_default();
    let kind = question.split(':').next().unwrap_or_default();
    let reply = match (kind, result) {
        ("docs", None) => tool_calls(
            &[("c1", "search_docs", r#"{"query":"CO2 alarm threshold"}"#)],
            usage(100, 10),
        ),
        ("docs", Some(content)) => {
            let id = first_passage_id(&content).unwrap().to_string();
            answer(
                &format!("The alarm threshold is 1000 ppm [^{id}]."),
                usage(200, 20),
            )
        }
        ("live", None) => tool_calls(
            &[(
                "c1",
                "get_occupancy",
                r#"{"building_id":"acme-hq","room_id":"hq-101"}"#,
            )],
            usage(100, 10),
        ),
        ("live", Some(content)) if content.contains("\"count\"") => {
            answer(&format!("Occupancy data: {content}"), usage(200, 20))
        }
        ("live", Some(_)) => answer(IDK_MARKER, usage(200, 20)),
        ("ppm", _) => answer("It is 1000 ppm.", usage(100, 10)),
        ("nothing", _) => answer("No idea, sorry.", usage(100, 10)),
        ("poem", _) => answer("I can only help with CrowdVision topics.", usage(100, 10)),
        ("error", _) => Reply::Status {
            status: 500,
            retry_after: None,
        },
        ("hang", _) => Reply::Hang(Duration::from_secs(5)),
        ("sweep", _) if model == "m-bad" => answer("Nothing to say.", usage(100, 10)),
        ("sweep", _) => answer("It is 1000 ppm.", usage(100, 10)),
        ("flaky", _) => {
            if flaky_counter
                .fetch_add(1, Ordering::SeqCst)
                .is_multiple_of(2)
            {
                answer("It is 1000 ppm.", usage(100, 10))
            } else {
                answer("No idea.", usage(100, 10))
            }
        }
        _ => answer(IDK_MARKER, usage(10, 1)),
    };
    Some(reply)
}

struct World {
    provider: ScriptedProvider,
    dir: tempfile::TempDir,
}

/// A knowledge base of one public and one staff page, ingested by the binary, and the
/// scripted provider.
async fn world() -> World {
    let counter = Arc::new(AtomicUsize::new(0));
    let provider = ScriptedProvider::with_rule(move |body| play(&counter, body)).await;
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("docs/co2.md"),
        "# CO2\n\nThe CO2 alarm threshold is 1000 ppm in every meeting room.\n",
    );
    write(
        &dir.path().join("docs/staff/maintenance.md"),
        "---\npermissions: [business_staff]\n---\n# Maintenance\n\nBatteries last 36 months.\n",
    );
    let world = World { provider, dir };
    let output = world.command(&["ingest", "docs"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    world
}

impl World {
    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = agent(self.dir.path());
        command
            .args(args)
            .env(
                "DATABASE_URL",
                format!("sqlite://{}", self.dir.path().join("kb.sqlite").display()),
            )
            .env("EMBEDDING_PROVIDER", "local")
            .env("EMBEDDING_DIM", "64")
            .env("LLM_BASE_URL", &self.provider.url)
            .env("REQUIRE_GROUNDED_ANSWERS", "false")
            // The scripts follow a model that may search again after the library's search.
            .env("SEARCH_AGAIN", "true")
            .env("OPENROUTER_API_KEY", "test-key")
            .env("LLM_MAX_RETRIES", "0")
            .env("ANSWER_MODEL", "scripted/model")
            .env_remove("JUDGE_MODEL");
        command
    }

    fn dataset(&self, name: &str, text: &str) -> String {
        write(&self.dir.path().join(name), text);
        name.to_string()
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    async fn eval(&self, args: &[&str]) -> Output {
        let mut full = vec!["eval"];
        full.extend_from_slice(args);
        let mut command = self.command(&full);
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    fn report(&self, name: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path(name)).unwrap()).unwrap()
    }
}

/// Status per case id of the first model of a JSON report.
fn statuses(report: &Value, model: usize) -> BTreeMap<String, String> {
    report["models"][model]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const EVERY_STATUS: &str = r#"
cases:
  - id: pass-docs
    question: "docs: what is the CO2 alarm threshold?"
    expect: {tools: [search_docs], cited_sources: [co2.md], contains: ["1000 ppm"], not_cited_sources: [staff/maintenance.md], idk: false, decision: answered}
    tags: [docs]
  - id: fail-contains
    question: "nothing: say a unit"
    expect: {contains: ["ppm"], not_contains: ["sorry"]}
    tags: [docs]
  - id: xfail-predicted
    question: "nothing: a known gap"
    expect: {contains: ["ppm"]}
    xfail: "the model does not know units yet"
  - id: xpass-stale
    question: "ppm: a fixed gap"
    expect: {contains: ["ppm"]}
    xfail: "was broken once"
  - id: error-provider
    question: "error: the provider fails"
    expect: {idk: true}
  - id: judge-pass
    question: "poem: write me a poem"
    expect: {decision: declined, judge: "Declines in one short sentence."}
    tags: [scope]
  - id: judge-fails
    question: "poem: write me another poem"
    expect: {decision: declined, judge: "judge-fail: declines"}
    tags: [scope]
"#;

#[tokio::test]
async fn every_status_is_reported_in_the_table_json_junit_and_markdown() {
    let w = world().await;
    let dataset = w.dataset("every.yaml", EVERY_STATUS);
    let output = w
        .eval(&[
            &dataset,
            "--json",
            "r.json",
            "--junit",
            "r.xml",
            "--markdown",
            "r.md",
        ])
        .await;
    // A FAIL, a judge FAIL and an ERROR: exit 1.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let out = stdout(&output);
    for word in ["PASS", "FAIL", "ERROR", "XFAIL", "XPASS", "pass rate"] {
        assert!(out.contains(word), "{word} missing from\n{out}");
    }
    // The failing assertion is spelled out: expected vs got.
    assert!(
        out.contains("contains: expected \"ppm\", got missing: \"ppm\""),
        "{out}"
    );
    assert!(
        out.contains("not_contains: expected \"sorry\", got present: \"sorry\""),
        "{out}"
    );
    assert!(
        out.contains("judge: expected judge-fail: declines, got not met: writes no poem"),
        "{out}"
    );

    let report = w.report("r.json");
    let expected: BTreeMap<String, String> = [
        ("pass-docs", "PASS"),
        ("fail-contains", "FAIL"),
        ("xfail-predicted", "XFAIL"),
        ("xpass-stale", "XPASS"),
        ("error-provider", "ERROR"),
        ("judge-pass", "PASS"),
        ("judge-fails", "FAIL"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(statuses(&report, 0), expected);
    let summary = &report["models"][0]["summary"];
    assert_eq!(summary["pass"], 2);
    assert!((summary["pass_rate"].as_f64().unwrap() - 3.0 / 7.0).abs() < 1e-9);
    // Answer tokens: two hops for pass-docs (330), 100+10 for each of three single answers;
    // the errored case and the two requests for a poem (declined by rule) used none. The
    // judge's two gradings are counted apart.
    assert_eq!(summary["usage"]["total_tokens"], 330 + 3 * 110);
    assert_eq!(summary["judge_usage"]["total_tokens"], 2 * 55);
    assert_eq!(summary["by_tag"]["scope"]["passed"], 1);
    assert_eq!(summary["by_assertion"]["judge"]["total"], 2);
    let error_case = &report["models"][0]["cases"][4];
    assert!(error_case["runs"][0]["error"]
        .as_str()
        .unwrap()
        .contains("500"));

    let xml = std::fs::read_to_string(w.path("r.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("the JUnit report is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("tests"), Some("7"));
    assert_eq!(root.attribute("failures"), Some("2"));
    assert_eq!(root.attribute("errors"), Some("1"));
    assert_eq!(root.attribute("skipped"), Some("1"));
    let suite = root
        .children()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("name"), Some("scripted/model"));
    let outcome = |id: &str| -> Vec<String> {
        suite
            .children()
            .find(|n| n.attribute("name") == Some(id))
            .unwrap()
            .children()
            .filter(|n| n.is_element() && !n.has_tag_name("system-out"))
            .map(|n| n.tag_name().name().to_string())
            .collect()
    };
    assert_eq!(outcome("pass-docs"), Vec::<String>::new());
    assert_eq!(outcome("fail-contains"), vec!["failure"]);
    assert_eq!(outcome("error-provider"), vec!["error"]);
    assert_eq!(outcome("xfail-predicted"), vec!["skipped"]);
    assert_eq!(outcome("xpass-stale"), Vec::<String>::new());

    let markdown = std::fs::read_to_string(w.path("r.md")).unwrap();
    assert!(
        markdown.contains("| scripted/model | 42.9% | 2 | 2 | 1 | 1 | 1 |"),
        "{markdown}"
    );
    assert!(markdown.contains("**FAIL** `fail-contains`"), "{markdown}");
    assert!(
        markdown.contains("**ERROR** `error-provider`"),
        "{markdown}"
    );
}

#[tokio::test]
async fn exit_codes_follow_fail_error_and_strict_xpass() {
    let w = world().await;
    let green = w.dataset(
        "green.yaml",
        "cases:\n  - {id: ok, question: 'ppm: x', expect: {contains: [ppm]}}\n  \
         - {id: gap, question: 'nothing: x', expect: {contains: [ppm]}, xfail: a known gap}\n",
    );
    assert_eq!(w.eval(&[&green]).await.status.code(), Some(0));
    let stale = w.dataset(
        "stale.yaml",
        "cases:\n  - {id: fixed, question: 'ppm: x', expect: {contains: [ppm]}, xfail: fixed now}\n",
    );
    assert_eq!(w.eval(&[&stale]).await.status.code(), Some(0));
    let strict = w.eval(&[&stale, "--strict"]).await;
    assert_eq!(strict.status.code(), Some(1), "{}", stdout(&strict));

    // Bad datasets exit 2 before any model call, naming file, case and field.
    let before = w.provider.requests().len();
    let bad = w.dataset(
        "bad.yaml",
        "cases:\n  - {id: a, question: q, expect: {tools: [get_weather]}}\n  \
         - {id: a, question: q, expect: {idk: true}}\n  \
         - {id: b, question: q, expect: {idk: true}, xfail: ''}\n  \
         - {id: c, question: q, expect: {idk: true}, as: {roles: [root]}}\n  \
         - {id: d, question: q, expct: {idk: true}}\n",
    );
    let output = w.eval(&[&bad]).await;
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    for expected in [
        "bad.yaml: case \"a\": expect.tools: unknown tool \"get_weather\"",
        "bad.yaml: case \"b\": xfail: needs a written reason",
        "bad.yaml: case \"c\": as.roles: unknown role \"root\"",
        "bad.yaml: case \"d\": unknown field `expct`",
    ] {
        assert!(err.contains(expected), "{expected} missing from\n{err}");
    }
    let duplicate = w.dataset(
        "dup.yaml",
        "cases:\n  - {id: a, question: q, expect: {idk: true}}\n  - {id: a, question: q, expect: {idk: true}}\n",
    );
    let output = w.eval(&[&duplicate]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("case \"a\": id: duplicate"));
    let output = w.eval(&["missing.yaml"]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("missing.yaml: cannot read"));
    let output = w.eval(&[&green, "--filter", "no-such-case"]).await;
    assert_eq!(output.status.code(), Some(2));
    let output = w.eval(&[&green, "--baseline", "bad.yaml"]).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not a report written by eval --json"));
    assert_eq!(
        w.provider.requests().len(),
        before,
        "a bad input reached the model"
    );
}

#[tokio::test]
async fn a_sweep_prints_one_matrix_and_the_cases_that_differ() {
    let w = world().await;
    let dataset = w.dataset(
        "sweep.yaml",
        "cases:\n  - {id: same, question: 'ppm: x', expect: {contains: [ppm]}}\n  \
         - {id: differs, question: 'sweep: x', expect: {contains: [ppm]}}\n",
    );
    let output = w
        .eval(&[&dataset, "--models", "m-good,m-bad", "--json", "s.json"])
        .await;
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(
        out.contains("cases whose outcome differs between models"),
        "{out}"
    );
    let matrix_rows: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("m-good") || l.contains("m-bad"))
        .collect();
    assert!(
        matrix_rows
            .iter()
            .any(|l| l.contains("m-good") && l.contains("100.0%")),
        "{out}"
    );
    assert!(
        matrix_rows
            .iter()
            .any(|l| l.contains("m-bad") && l.contains("50.0%")),
        "{out}"
    );
    let report = w.report("s.json");
    assert_eq!(report["models"][0]["model"], "m-good");
    assert_eq!(report["models"][1]["model"], "m-bad");
    assert_eq!(report["differing"][0]["id"], "differs");
    assert_eq!(report["differing"].as_array().unwrap().len(), 1);
    // Each model answered with itself, for a caller who may not override the model.
    let models: BTreeSet<String> = w
        .provider
        .requests()
        .iter()
        .map(|r| r["model"].as_str().unwrap().to_string())
        .collect();
    assert!(models.contains("m-good") && models.contains("m-bad"));
}

#[tokio::test]
async fn repeats_give_a_pass_rate_and_mark_flaky_cases() {
    let w = world().await;
    let dataset = w.dataset(
        "flaky.yaml",
        "cases:\n  - {id: wobbly, question: 'flaky: x', expect: {contains: [ppm]}}\n  \
         - {id: steady, question: 'ppm: x', expect: {contains: [ppm]}}\n",
    );
    let output = w
        .eval(&[&dataset, "--repeat", "4", "--jobs", "1", "--json", "f.json"])
        .await;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("FAIL (flaky 50%)"),
        "{}",
        stdout(&output)
    );
    let report = w.report("f.json");
    let wobbly = &report["models"][0]["cases"][0];
    assert_eq!(wobbly["flaky"], true);
    assert_eq!(wobbly["status"], "FAIL");
    assert_eq!(wobbly["pass_rate"], 0.5);
    assert_eq!(wobbly["runs"].as_array().unwrap().len(), 4);
    assert_eq!(report["models"][0]["cases"][1]["flaky"], false);
    assert_eq!(report["models"][0]["summary"]["flaky"], 1);
}

#[tokio::test]
async fn a_baseline_names_new_failures_fixed_cases_and_the_pass_rate_change() {
    let w = world().await;
    let dataset = w.dataset(
        "b.yaml",
        "cases:\n  - {id: now-broken, question: 'nothing: x', expect: {contains: [ppm]}}\n  \
         - {id: now-fixed, question: 'ppm: x', expect: {contains: [ppm]}}\n",
    );
    let first = w.eval(&[&dataset, "--json", "before.json"]).await;
    assert_eq!(first.status.code(), Some(1));
    // Make the baseline say the opposite of what happens now.
    let mut baseline = w.report("before.json");
    baseline["models"][0]["cases"][0]["status"] = json!("PASS");
    baseline["models"][0]["cases"][1]["status"] = json!("FAIL");
    baseline["models"][0]["summary"]["pass_rate"] = json!(0.5);
    std::fs::write(w.path("base.json"), baseline.to_string()).unwrap();

    let output = w
        .eval(&[&dataset, "--baseline", "base.json", "--markdown", "pr.md"])
        .await;
    let out = stdout(&output);
    assert!(
        out.contains("new failure: now-broken (scripted/model) PASS → FAIL"),
        "{out}"
    );
    assert!(
        out.contains("fixed: now-fixed (scripted/model) FAIL → PASS"),
        "{out}"
    );
    assert!(
        out.contains("pass rate 50.0% → 50.0% (+0.0 points)"),
        "{out}"
    );
    let markdown = std::fs::read_to_string(w.path("pr.md")).unwrap();
    assert!(
        markdown.contains("New failures:\n- `now-broken`"),
        "{markdown}"
    );
    assert!(markdown.contains("Fixed:\n- `now-fixed`"), "{markdown}");
}

#[tokio::test]
async fn the_judge_is_asked_once_more_after_a_malformed_verdict_then_errors() {
    let w = world().await;
    let dataset = w.dataset(
        "judge.yaml",
        "cases:\n  - {id: once, question: 'poem: x', expect: {judge: judge-garbled-once}}\n  \
         - {id: twice, question: 'poem: y', expect: {judge: judge-garbled}}\n",
    );
    let output = w
        .eval(&[&dataset, "--judge-model", "other/judge", "--json", "j.json"])
        .await;
    assert_eq!(output.status.code(), Some(1));
    let report = w.report("j.json");
    assert_eq!(
        statuses(&report, 0),
        [("once", "PASS"), ("twice", "ERROR")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    );
    assert_eq!(report["judge_model"], "other/judge");
    let twice = &report["models"][0]["cases"][1]["runs"][0];
    assert!(twice["error"].as_str().unwrap().contains("malformed twice"));
    assert_eq!(twice["judge"]["usage"]["total_tokens"], 110);
    let judge_requests: Vec<Value> = w
        .provider
        .requests()
        .into_iter()
        .filter(|r| r.get("response_format").is_some())
        .collect();
    assert_eq!(judge_requests.len(), 4);
    assert!(judge_requests.iter().all(|r| r["model"] == "other/judge"));
    assert_eq!(
        judge_requests[0]["response_format"]["json_schema"]["schema"]["required"],
        json!(["requirements"])
    );
    // Without a flag, JUDGE_MODEL or judge_model, the judge is of another family.
    let output = w
        .eval(&[&dataset, "--filter", "once", "--json", "k.json"])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(w.report("k.json")["judge_model"], "google/gemini-2.5-flash");
}

#[tokio::test]
async fn cases_run_as_their_callers_against_the_simulator_within_their_timeout() {
    let w = world().await;
    let dataset = w.dataset(
        "live.yaml",
        r#"
cases:
  - id: acme-staff-sees-hq
    question: "live: people in hq-101?"
    as: {roles: [business_staff], domains: [acme]}
    expect: {tools: [get_occupancy], contains: ['"count":6'], idk: false}
    tags: [live]
  - id: globex-sees-nothing
    question: "live: people in hq-101?"
    as: {roles: [business_staff], domains: [globex]}
    expect: {tools: [get_occupancy], not_contains: ['"count"'], idk: true}
    tags: [live]
  - id: slow
    question: "hang: take your time"
    expect: {idk: true}
"#,
    );
    let output = w
        .eval(&[
            &dataset,
            "--sim",
            "--sim-fixture",
            repo_root()
                .join("datasets/sim/campus.yaml")
                .to_str()
                .unwrap(),
            "--timeout",
            "1",
            "--json",
            "l.json",
            "--filter",
            "live",
            "--filter",
            "slow",
        ])
        .await;
    let report = w.report("l.json");
    let found = statuses(&report, 0);
    assert_eq!(found["acme-staff-sees-hq"], "PASS", "{}", stdout(&output));
    assert_eq!(found["globex-sees-nothing"], "PASS", "{}", stdout(&output));
    assert_eq!(found["slow"], "ERROR");
    let slow = &report["models"][0]["cases"][2]["runs"][0];
    assert!(slow["error"]
        .as_str()
        .unwrap()
        .contains("no answer within 1 s"));
    assert!(slow["latency_ms"].as_u64().unwrap() < 3000);
    assert_eq!(output.status.code(), Some(1));
}

#[tokio::test]
async fn the_golden_set_runs_end_to_end_and_writes_every_report() {
    let w = world().await;
    let golden = repo_root().join("datasets/golden.yaml");
    let output = w
        .eval(&[
            golden.to_str().unwrap(),
            "--sim",
            "--sim-fixture",
            repo_root()
                .join("datasets/sim/campus.yaml")
                .to_str()
                .unwrap(),
            "--jobs",
            "8",
            "--json",
            "g.json",
            "--junit",
            "g.xml",
            "--markdown",
            "g.md",
        ])
        .await;
    // The scripted model answers every golden question with the IDK marker: most cases fail.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = w.report("g.json");
    let cases = report["models"][0]["cases"].as_array().unwrap();
    let loaded = dataset::load(&[golden], &STANDARD_TOOL_NAMES).unwrap();
    assert_eq!(cases.len(), loaded.cases.len());
    let idk_cases = cases
        .iter()
        .filter(|c| c["id"].as_str().unwrap().starts_with("idk-"));
    assert!(idk_cases.clone().count() >= 3);
    for case in idk_cases {
        assert_eq!(case["status"], "PASS", "{case}");
    }
    let xml = std::fs::read_to_string(w.path("g.xml")).unwrap();
    roxmltree::Document::parse(&xml).unwrap();
    assert!(std::fs::read_to_string(w.path("g.md"))
        .unwrap()
        .contains("pass rate"));
}

/// The golden set itself: big enough, every tool twice, every restricted page guarded.
#[test]
fn the_golden_set_covers_what_it_must() {
    let golden = dataset::load(
        &[repo_root().join("datasets/golden.yaml")],
        &STANDARD_TOOL_NAMES,
    )
    .unwrap();
    assert!(golden.cases.len() >= 60, "{} cases", golden.cases.len());
    for tool in STANDARD_TOOL_NAMES {
        let uses = golden
            .cases
            .iter()
            .filter(|c| c.expect.tools.iter().any(|t| t == tool))
            .count();
        assert!(uses >= 2, "{tool} is expected by {uses} cases");
    }
    let docs = repo_root().join("documentation");
    let restricted = restricted_pages(&docs);
    assert!(restricted.len() >= 3, "{restricted:?}");
    for page in restricted {
        let guarded = golden.cases.iter().any(|c| {
            c.expect.not_cited_sources.contains(&page) && !c.expect.not_contains.is_empty()
        });
        assert!(
            guarded,
            "no case keeps {page} from a caller below its audience"
        );
    }
    let tags: BTreeSet<&str> = golden
        .cases
        .iter()
        .flat_map(|c| c.tags.iter().map(String::as_str))
        .collect();
    for tag in [
        "multi-hop",
        "german",
        "french",
        "greeting",
        "idk",
        "jailbreak",
        "other-domain",
        // Known gaps keep their cases and this tag once mended (an open one is `xfail`).
        "gap",
    ] {
        assert!(tags.contains(tag), "no case tagged {tag}");
    }
}

/// Pages of `documentation/` whose front matter restricts them, as source keys.
fn restricted_pages(root: &Path) -> Vec<String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .take_while(|l| !l.starts_with('#'))
                .any(|l| l.starts_with("permissions:"))
        })
        .map(|e| {
            e.path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}
