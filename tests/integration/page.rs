//! The chat page in a real headless Chromium (Debian's, driven over WebDriver), served by
//! `serve` behind the shipped Caddyfile at `/agent/`, with the simulator and the scripted
//! provider. A person's flow: log in with a token, ask a documentation question (tokens stream
//! in, the final text is the answer, a footnote opens its passage), ask about a sensor's
//! history (an SVG chart, one point per returned bucket), a follow-up that needs the previous
//! turn, Stop; then the same by keyboard only, an axe-core check, no console error, no request
//! to another origin, the CSP header, and screenshots at 1280 and 360 px
//! (`target/screenshots/`).

use crate::provider::{
    answer, last_user_text, streamed_answer, streamed_tool_calls, tool_calls, usage, Reply,
    ScriptedProvider,
};
use crate::util::{
    agent, free_port, in_ci, repo_root, skipped, stderr, wait_until_up, write, Running,
};
use crate::webdriver::{self, Browser, ENTER, ESCAPE, TAB};
use crowdvision_agent::auth::jwt::sign_hs256;
use crowdvision_agent::sim::{self, Fixture};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SECRET: &str = "page-test-secret-of-at-least-32-bytes";
const DOCS_QUESTION: &str = "Where is the zebra display?";
const HISTORY_QUESTION: &str =
    "How did the CO2 in room hq-101 of building acme-hq develop over the last 24 hours?";
const FOLLOW_UP: &str = "And what is the temperature there right now?";
const SLOW_QUESTION: &str = "Tell me everything about the zebra display";
/// Answered "I don't know" beside its own count by the scripted model, as the 1.5B model did.
const OCCUPANCY_QUESTION: &str =
    "How many people are in Meeting Room Aurora in Acme Headquarters right now?";
/// Its answer call meets a provider that answers 503 every time.
const OUTAGE_QUESTION: &str = "Is the zebra display switched on?";

/// What the scripted model saw, for the assertions.
#[derive(Default)]
struct Seen {
    /// Points (or buckets) in the history result the model was given.
    history_points: Option<usize>,
    /// The follow-up's request carried the earlier turns.
    follow_up_had_history: bool,
}

pub(crate) fn first_marker(text: &str) -> Option<String> {
    let start = text.find("[^")? + 2;
    let end = text[start..].find(']')? + start;
    Some(text[start..end].to_string())
}

fn tool_result(body: &Value) -> Option<Value> {
    let last = body["messages"].as_array()?.last()?;
    if last["role"] != "tool" {
        return None;
    }
    serde_json::from_str(last["content"].as_str()?).ok()
}

/// `pieces` as the request asks: streamed `pause` apart, or whole.
pub(crate) fn say(body: &Value, pieces: &[&str], pause: Duration) -> Reply {
    if body["stream"] == true {
        streamed_answer(pieces, usage(20, 8), pause)
    } else {
        answer(&pieces.concat(), usage(20, 8))
    }
}

/// One tool call, streamed or whole as the request asks.
fn call(body: &Value, id: &str, tool: &str, arguments: &str) -> Reply {
    if body["stream"] == true {
        streamed_tool_calls(&[(id, tool, arguments)], 16, usage(10, 2))
    } else {
        tool_calls(&[(id, tool, arguments)], usage(10, 2))
    }
}

/// The scripted model of the page test.
fn rule(seen: Arc<Mutex<Seen>>) -> impl Fn(&Value) -> Option<Reply> + Send + Sync {
    move |body: &Value| {
        let question = last_user_text(body);
        let result = tool_result(body);
        let pause = Duration::from_millis(150);
        if question.contains(SLOW_QUESTION) {
            // Slow enough that Stop always comes first, even on a loaded machine.
            let pieces = [
                "The zebra ",
                "display ",
                "is ",
                "in ",
                "the ",
                "lobby ",
                "of ",
                "Acme ",
                "Headquarters, ",
                "by ",
                "the ",
                "door.",
            ];
            return Some(say(body, &pieces, Duration::from_secs(3)));
        }
        if question.contains(DOCS_QUESTION) {
            let id = first_marker(&question)?;
            let marker = format!(" [^{id}].");
            let pieces = [
                "The zebra ",
                "display ",
                "is in ",
                "the lobby",
                marker.as_str(),
            ];
            return Some(say(body, &pieces, pause));
        }
        if question.contains(HISTORY_QUESTION) {
            let Some(result) = result else {
                let arguments = r#"{"building_id":"acme-hq","room_id":"hq-101","sensor_type":"co2","from":"24 hours ago","to":"now"}"#;
                return Some(call(body, "h1", "get_sensor_history", arguments));
            };
            let raw = result["points"].as_array().map(Vec::len).unwrap_or(0);
            let buckets = result["summary"]["buckets"]
                .as_array()
                .map(Vec::len)
                .unwrap_or(0);
            seen.lock().unwrap().history_points = Some(raw.max(buckets));
            let stats = if result["stats"].is_object() {
                &result["stats"]
            } else {
                &result["summary"]
            };
            let (min, max) = (stats["min"].clone(), stats["max"].clone());
            let text = format!("CO2 in Meeting Room Aurora went from {min} to {max} ppm.");
            return Some(say(body, &[text.as_str()], pause));
        }
        if question.contains(OCCUPANCY_QUESTION) {
            if result.is_none() {
                let arguments = r#"{"building_id":"acme-hq","room_id":"hq-101"}"#;
                return Some(call(body, "o1", "get_occupancy", arguments));
            }
            let idk = "I don't know based on the available CrowdVision information.";
            return Some(say(body, &[idk], pause));
        }
        if question.contains(OUTAGE_QUESTION) {
            return Some(Reply::Status {
                status: 503,
                retry_after: None,
            });
        }
        if question.contains(FOLLOW_UP) {
            let earlier = body["messages"].as_array()?.iter().any(|m| {
                m["role"] == "user" && m["content"].as_str().is_some_and(|c| c.contains("develop"))
            });
            seen.lock().unwrap().follow_up_had_history = earlier;
            let Some(result) = result else {
                let arguments =
                    r#"{"building_id":"acme-hq","room_id":"hq-101","sensor_type":"temperature"}"#;
                return Some(call(body, "t1", "get_latest_sensor_data", arguments));
            };
            let value = result["readings"][0]["value"].clone();
            let text = format!("It is {value} °C in Meeting Room Aurora.");
            return Some(say(body, &[text.as_str()], pause));
        }
        None
    }
}

/// Text of the last answer on the page, footnote numbers left out.
const LAST_ANSWER_TEXT: &str = "const turns = document.querySelectorAll('.turn .text'); \
    if (!turns.length) return null; const copy = turns[turns.length - 1].cloneNode(true); \
    copy.querySelectorAll('sup').forEach((s) => s.remove()); return copy.textContent;";

/// Counts the changes of the answer's text while it streams, from now on.
const WATCH_TOKENS: &str = "window.__tokenUpdates = 0; new MutationObserver(() => { \
    const t = document.querySelector('.turn:last-child .text.streaming'); \
    if (t) window.__tokenUpdates += 1; }).observe(document.getElementById('log'), \
    {subtree: true, childList: true, characterData: true});";

pub(crate) const ANSWERED: &str = "return document.querySelector('#ask').disabled === false \
    && document.querySelectorAll('.turn .meta').length > 0 \
    && Array.from(document.querySelectorAll('.turn .meta')).every((m) => m.textContent !== '');";

/// The questions asked so far, kept by the server: the URL names the conversation, a reload
/// shows it again, the side list opens it, a thumbs-down with a reason is taken, and a share
/// link opens read-only for another caller.
async fn conversations_last_and_are_shared(browser: &Browser, page: &str) {
    let url = browser.script("return location.href;", json!([])).await;
    let url = url.as_str().unwrap().to_string();
    assert!(
        url.contains("?c=c_"),
        "the URL names the conversation: {url}"
    );
    let asked = browser
        .script(
            "return document.querySelectorAll('.turn').length;",
            json!([]),
        )
        .await;
    browser.open(&url).await;
    let kept = browser
        .wait_for(
            "the conversation after a reload",
            "const t = document.querySelectorAll('.turn'); return t.length >= 4 && document.querySelector('.turn .meta').textContent !== '' ? t.length : null;",
            Duration::from_secs(30),
        )
        .await;
    // The stopped answer and the outage were never answered, so never kept.
    assert_eq!(kept.as_u64().unwrap() + 2, asked.as_u64().unwrap());
    let first = browser
        .script(
            "return document.querySelector('.turn .question').textContent;",
            json!([]),
        )
        .await;
    assert_eq!(first, DOCS_QUESTION);

    reopen_from_the_list(browser, DOCS_QUESTION, 4).await;
    complain(browser, "wrong_figure", Some("It was 7.")).await;

    // A share link, opened by another acme caller in the same browser.
    browser.click("#share").await;
    let link = browser
        .wait_for(
            "the share link",
            "const f = document.querySelector('.share-url'); return f && f.value;",
            Duration::from_secs(30),
        )
        .await;
    let link = link.as_str().unwrap().to_string();
    assert!(link.starts_with(page) && link.contains("?share="), "{link}");
    let other = sign_hs256(
        &json!({"sub": "kim", "roles": ["standard_customer"], "domains": ["acme"],
            "exp": chrono::Utc::now().timestamp() + 3600}),
        SECRET.as_bytes(),
    );
    browser
        .script(
            "sessionStorage.setItem('crowdvision.credential', JSON.stringify({kind: 'bearer', value: arguments[0]}));",
            json!([other]),
        )
        .await;
    browser.open(&link).await;
    let shown = browser
        .wait_for(
            "the shared conversation",
            "const n = document.getElementById('shared-note'); return !n.hidden && n.textContent.startsWith('Shared') && document.querySelectorAll('.turn').length >= 4 ? n.textContent : null;",
            Duration::from_secs(30),
        )
        .await;
    assert!(shown.as_str().unwrap().contains(DOCS_QUESTION), "{shown}");
    let read_only = browser
        .script(
            "return document.getElementById('ask-form').hidden;",
            json!([]),
        )
        .await;
    assert_eq!(read_only, true);
    let counted = browser
        .script(
            "return document.body.textContent.includes('has 6 people');",
            json!([]),
        )
        .await;
    assert_eq!(counted, true, "an acme caller sees acme's live answer");
}

/// New conversation, then the side list's first entry, which must be titled `title`, opened
/// again with at least `turns` turns.
pub(crate) async fn reopen_from_the_list(browser: &Browser, title: &str, turns: usize) {
    browser.click("#new").await;
    let listed = browser
        .wait_for(
            "the side list",
            "const b = document.querySelector('#conversations .conversation'); return b && b.textContent;",
            Duration::from_secs(30),
        )
        .await;
    assert_eq!(listed, title, "titled by its first question");
    browser.click("#conversations .conversation").await;
    let opened = format!(
        "return document.querySelectorAll('.turn').length >= {turns} && location.search.startsWith('?c=');"
    );
    browser
        .wait_for(
            "the conversation opened from the list",
            &opened,
            Duration::from_secs(30),
        )
        .await;
}

/// A thumbs-down on the last answer with `reason` (and `comment`), taken with thanks.
pub(crate) async fn complain(browser: &Browser, reason: &str, comment: Option<&str>) {
    browser.click(".turn:last-child .thumb.down").await;
    browser
        .script(
            "document.querySelector('.turn:last-child .complaint select').value = arguments[0]; \
             document.querySelector('.turn:last-child .complaint input').value = arguments[1];",
            json!([reason, comment.unwrap_or_default()]),
        )
        .await;
    browser.click(".turn:last-child .complaint button").await;
    let said = browser
        .wait_for(
            "the complaint taken",
            "const s = document.querySelector('.turn:last-child .said'); return s && s.textContent;",
            Duration::from_secs(30),
        )
        .await;
    assert_eq!(said, "Thanks, noted.");
}

/// `ingest docs` and then `serve` in `dir`, both with `env`, behind the shipped Caddyfile
/// (with `caddy_env`): the two processes and the proxy's origin, once `/agent/healthz` answers.
pub(crate) async fn serve_behind_caddy(
    dir: &std::path::Path,
    env: &dyn Fn(&mut Command),
    caddy_env: &[(&str, &str)],
) -> (Running, Running, String) {
    let mut ingest = agent(dir);
    env(&mut ingest);
    let output = ingest.args(["ingest", "docs"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let port = free_port();
    let mut serve = agent(dir);
    env(&mut serve);
    serve
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let serve = Running(serve.spawn().unwrap());
    wait_until_up(&format!("http://127.0.0.1:{port}/healthz")).await;
    let proxy_port = free_port();
    let caddy = crate::proxy::start_caddy(dir, proxy_port, &format!("127.0.0.1:{port}"), caddy_env);
    let origin = format!("http://127.0.0.1:{proxy_port}");
    wait_until_up(&format!("{origin}/agent/healthz")).await;
    (serve, caddy, origin)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_chat_page_answers_charts_cites_and_stops_in_a_real_browser() {
    if !webdriver::available() || Command::new("caddy").arg("version").output().is_err() {
        assert!(
            !in_ci(),
            "chromium, chromedriver or caddy is missing and CI=true (scripts/provision-browser)"
        );
        skipped(
            "page test",
            "chromium/chromedriver or caddy is not installed",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("docs/open.md"),
        "# Open\n\nThe zebra display stands in the lobby of Acme Headquarters.\n",
    );
    let seen = Arc::new(Mutex::new(Seen::default()));
    let provider = ScriptedProvider::with_rule(rule(seen.clone())).await;
    provider.set_topic("crowdvision_platform_roles_or_settings");
    let fixture = Fixture::load(&repo_root().join("datasets/sim/campus.yaml")).unwrap();
    let sim = sim::start(fixture, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let database = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
    let env = |command: &mut Command| {
        command
            .env("DATABASE_URL", &database)
            .env("EMBEDDING_PROVIDER", "local")
            .env("LLM_BASE_URL", &provider.url)
            .env("OPENROUTER_API_KEY", "test-key")
            .env("EVAL_JWT_SECRET", SECRET)
            .env("TWIN_SERVICE_URL", &sim.url)
            .env("SENSOR_SERVICE_URL", &sim.url)
            .env("HISTORY", "false");
    };
    let (_serve, _caddy, origin) = serve_behind_caddy(dir.path(), &env, &[]).await;
    let page = format!("{origin}/agent/");

    // The page's own headers, through the proxy.
    let response = reqwest::get(&page).await.unwrap();
    let csp = response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert!(response.text().await.unwrap().contains("assets/app.js"));

    let token = sign_hs256(
        &json!({"sub": "pat", "roles": ["business_staff"], "domains": ["acme"],
            "exp": chrono::Utc::now().timestamp() + 3600}),
        SECRET.as_bytes(),
    );
    let screenshots = repo_root().join("target/screenshots");

    // ----- with the mouse, 1280 px wide --------------------------------------------------
    let browser = Browser::start(1280).await;
    browser.open(&page).await;
    browser
        .wait_for(
            "the login hint",
            "return document.getElementById('who').textContent.includes('Not logged in')",
            Duration::from_secs(30),
        )
        .await;
    browser.click("#login-toggle").await;
    browser.type_into("#credential", &token).await;
    browser.click("#login-submit").await;
    browser
        .wait_for(
            "the caller shown",
            "return document.getElementById('who').textContent.includes('Asking as pat')",
            Duration::from_secs(30),
        )
        .await;

    // A documentation question: tokens stream, the final text is the answer, a footnote.
    browser.script(WATCH_TOKENS, json!([])).await;
    browser.type_into("#question", DOCS_QUESTION).await;
    browser.click("#ask").await;
    browser
        .wait_for("the first answer", ANSWERED, Duration::from_secs(90))
        .await;
    let updates = browser
        .script("return window.__tokenUpdates;", json!([]))
        .await;
    assert!(
        updates.as_u64().unwrap() >= 2,
        "token updates before done: {updates}"
    );
    let shown = browser.script(LAST_ANSWER_TEXT, json!([])).await;
    let expected = ask_json(&origin, &token, DOCS_QUESTION).await;
    let plain = strip_markers(expected["answer"].as_str().unwrap());
    assert_eq!(shown.as_str().unwrap().trim(), plain.trim());
    browser.click(".turn .footnote").await;
    let source = browser
        .wait_for("the passage panel", "const p = document.getElementById('panel'); return !p.hidden && document.getElementById('panel-source').textContent;", Duration::from_secs(20))
        .await;
    assert_eq!(source, expected["citations"][0]["source"]);
    let excerpt = browser
        .script(
            "return document.getElementById('panel-text').textContent;",
            json!([]),
        )
        .await;
    assert!(
        excerpt
            .as_str()
            .unwrap()
            .contains("zebra display stands in the lobby"),
        "{excerpt}"
    );
    browser.click("#panel-close").await;

    // A history question: an SVG with one point per returned bucket, unit and window.
    browser.type_into("#question", HISTORY_QUESTION).await;
    browser.click("#ask").await;
    browser
        .wait_for("the history answer", ANSWERED, Duration::from_secs(90))
        .await;
    let points = browser
        .script(
            "return document.querySelectorAll('.turn:last-child .chart svg circle.point').length;",
            json!([]),
        )
        .await;
    let returned = seen
        .lock()
        .unwrap()
        .history_points
        .expect("the history tool ran");
    assert!(returned > 1, "{returned}");
    assert_eq!(points.as_u64().unwrap() as usize, returned);
    let labels = browser
        .script("return Array.from(document.querySelectorAll('.turn:last-child .chart svg text')).map((t) => t.textContent).join(' | ');", json!([]))
        .await;
    let labels = labels.as_str().unwrap();
    assert!(labels.contains("ppm"), "{labels}");
    assert!(labels.contains("window "), "{labels}");
    assert!(
        labels.contains("min ") && labels.contains("max "),
        "{labels}"
    );
    browser.screenshot(&screenshots.join("page-1280.png")).await;

    // A follow-up that needs the previous turn.
    browser.type_into("#question", FOLLOW_UP).await;
    browser.click("#ask").await;
    browser
        .wait_for("the follow-up", ANSWERED, Duration::from_secs(90))
        .await;
    let follow = browser.script(LAST_ANSWER_TEXT, json!([])).await;
    assert!(
        follow.as_str().unwrap().contains("Meeting Room Aurora"),
        "{follow}"
    );
    assert!(seen.lock().unwrap().follow_up_had_history);

    // The occupancy question after the documentation one: the count beside its chart, never
    // "I don't know" (the model refused; the library writes the figure from the result).
    browser.type_into("#question", OCCUPANCY_QUESTION).await;
    browser.click("#ask").await;
    let state = browser
        .wait_for(
            "the occupancy answer",
            "const e = document.querySelector('.turn:last-child .error'); if (e) return 'ERROR ' + e.textContent; return (document.querySelector('#ask').disabled === false && document.querySelector('.turn:last-child .meta').textContent !== '') ? 'ok' : null;",
            Duration::from_secs(90),
        )
        .await;
    if state != "ok" {
        let requests = provider.requests();
        let last = requests.last().unwrap();
        panic!(
            "{state}: {}",
            serde_json::to_string_pretty(&last["messages"]).unwrap()
        );
    }
    let counted = browser.script(LAST_ANSWER_TEXT, json!([])).await;
    let counted = counted.as_str().unwrap();
    assert!(counted.contains("has 6 people"), "{counted}");
    assert!(!counted.contains("I don't know"), "{counted}");
    let chart = browser
        .script(
            "const c = document.querySelector('.turn:last-child .chart'); return c && c.textContent;",
            json!([]),
        )
        .await;
    assert!(chart.as_str().is_some_and(|c| c.contains('6')), "{chart}");

    // Stop: the answer is cancelled and the provider's stream is cut.
    let cut_before = provider.streams_cut();
    browser.type_into("#question", SLOW_QUESTION).await;
    browser.click("#ask").await;
    wait_for_slow_token(&browser).await;
    browser.click("#stop").await;
    wait_until_stopped(&browser, &provider, cut_before).await;

    // The provider is down for this answer: an error, not the IDK sentence.
    browser.type_into("#question", OUTAGE_QUESTION).await;
    browser.click("#ask").await;
    let failed = browser
        .wait_for(
            "the outage",
            "const e = document.querySelector('.turn:last-child .error'); return e && e.textContent;",
            Duration::from_secs(60),
        )
        .await;
    assert!(
        failed.as_str().unwrap().contains("provider is unavailable"),
        "{failed}"
    );
    let shown = browser.script(LAST_ANSWER_TEXT, json!([])).await;
    assert!(
        !shown.as_str().unwrap_or_default().contains("I don't know"),
        "{shown}"
    );

    conversations_last_and_are_shared(&browser, &page).await;

    // Nothing but the page's own origin; no console error.
    let origins = browser
        .script(
            "return performance.getEntriesByType('resource').map((e) => new URL(e.name).origin);",
            json!([]),
        )
        .await;
    for seen_origin in origins.as_array().unwrap() {
        assert_eq!(seen_origin.as_str().unwrap(), origin);
    }
    let errors: Vec<Value> = browser
        .console()
        .await
        .into_iter()
        .filter(|entry| entry["level"] == "SEVERE")
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // Accessibility: axe-core, nothing serious or critical.
    let violations = axe(&browser).await;
    assert!(violations.is_empty(), "axe: {violations:#?}");
    browser.quit().await;

    // ----- by keyboard only, 360 px wide -------------------------------------------------
    let narrow = Browser::start(360).await;
    narrow.resize(360, 800).await;
    narrow.open(&page).await;
    narrow
        .wait_for(
            "the page",
            "return document.getElementById('who').textContent.includes('Not logged in')",
            Duration::from_secs(30),
        )
        .await;
    // Asking before logging in: the 401 says how to log in.
    tab_to(&narrow, "question").await;
    narrow.press(&[DOCS_QUESTION, ENTER]).await;
    let refusal = narrow
        .wait_for(
            "the 401",
            "const e = document.querySelector('.turn .error'); return e && e.textContent;",
            Duration::from_secs(30),
        )
        .await;
    assert!(refusal.as_str().unwrap().contains("log in"), "{refusal}");
    tab_to(&narrow, "new").await;
    narrow.press(&[ENTER]).await;
    tab_to(&narrow, "login-toggle").await;
    narrow.press(&[ENTER]).await;
    let focused = active(&narrow).await;
    assert_eq!(focused, "credential", "the login opens on its field");
    narrow.press(&[&token]).await;
    tab_to(&narrow, "login-submit").await;
    narrow.press(&[ENTER]).await;
    narrow
        .wait_for(
            "the caller shown",
            "return document.getElementById('who').textContent.includes('Asking as pat')",
            Duration::from_secs(30),
        )
        .await;
    tab_to(&narrow, "question").await;
    narrow.press(&[DOCS_QUESTION, ENTER]).await;
    narrow
        .wait_for("the answer", ANSWERED, Duration::from_secs(90))
        .await;
    tab_to_class(&narrow, "footnote").await;
    narrow.press(&[ENTER]).await;
    narrow
        .wait_for("the panel", "return !document.getElementById('panel').hidden && document.activeElement.id === 'panel';", Duration::from_secs(20))
        .await;
    narrow.press(&[ESCAPE]).await;
    let back = narrow
        .script("return document.activeElement.className;", json!([]))
        .await;
    assert_eq!(
        back, "footnote",
        "Escape closes the panel and returns the focus"
    );
    // The history question, its chart, and Stop, all from the keyboard.
    tab_to(&narrow, "question").await;
    narrow.press(&[HISTORY_QUESTION, ENTER]).await;
    narrow
        .wait_for("the history answer", ANSWERED, Duration::from_secs(90))
        .await;
    let charted = narrow
        .script(
            "return document.querySelectorAll('.turn:last-child .chart svg circle.point').length;",
            json!([]),
        )
        .await;
    assert!(charted.as_u64().unwrap() > 1, "{charted}");
    narrow.screenshot(&screenshots.join("page-360.png")).await;
    let cut_before = provider.streams_cut();
    tab_to(&narrow, "question").await;
    narrow.press(&[SLOW_QUESTION, ENTER]).await;
    wait_for_slow_token(&narrow).await;
    tab_to(&narrow, "stop").await;
    narrow.press(&[ENTER]).await;
    wait_until_stopped(&narrow, &provider, cut_before).await;
    let violations = axe(&narrow).await;
    assert!(violations.is_empty(), "axe at 360 px: {violations:#?}");
    narrow.quit().await;
}

async fn wait_for_slow_token(browser: &Browser) {
    browser
        .wait_for(
            "the first slow token",
            "const t = document.querySelector('.turn:last-child .text'); \
             return t && t.textContent.includes('zebra');",
            Duration::from_secs(60),
        )
        .await;
}

/// The page says it stopped, and the provider saw its stream closed.
async fn wait_until_stopped(browser: &Browser, provider: &ScriptedProvider, cut_before: usize) {
    browser
        .wait_for(
            "stopped",
            "return document.getElementById('status').textContent === 'Stopped.';",
            Duration::from_secs(20),
        )
        .await;
    let started = std::time::Instant::now();
    while provider.streams_cut() == cut_before {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the provider never saw the stream closed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn ask_json(origin: &str, token: &str, question: &str) -> Value {
    reqwest::Client::new()
        .post(format!("{origin}/agent/ask"))
        .bearer_auth(token)
        .json(&json!({ "question": question }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn strip_markers(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("[^") {
        out.push_str(&rest[..at]);
        rest = rest[at..].find(']').map_or("", |end| &rest[at + end + 1..]);
    }
    out.push_str(rest);
    out
}

async fn active(browser: &Browser) -> String {
    let id = browser
        .script("return document.activeElement.id;", json!([]))
        .await;
    id.as_str().unwrap_or_default().to_string()
}

/// Presses Tab until the element with `id` has the focus.
async fn tab_to(browser: &Browser, id: &str) {
    for _ in 0..30 {
        if active(browser).await == id {
            return;
        }
        browser.press(&[TAB]).await;
    }
    panic!("Tab never reached #{id}");
}

async fn tab_to_class(browser: &Browser, class: &str) {
    for _ in 0..40 {
        let here = browser
            .script("return document.activeElement.className;", json!([]))
            .await;
        if here == json!(class) {
            return;
        }
        browser.press(&[TAB]).await;
    }
    panic!("Tab never reached .{class}");
}

/// axe-core's serious and critical violations on the page as it is.
pub(crate) async fn axe(browser: &Browser) -> Vec<Value> {
    let source = std::fs::read_to_string(repo_root().join("target/axe/axe.min.js"))
        .expect("axe-core is in target/axe (scripts/provision-browser)");
    browser.script(&source, json!([])).await;
    let result = browser
        .script_async(
            "const done = arguments[arguments.length - 1]; \
             axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations));",
            json!([]),
        )
        .await;
    result
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
        .map(|v| json!({"id": v["id"], "help": v["help"], "nodes": v["nodes"].as_array().map(|n| n.iter().map(|n| n["html"].clone()).collect::<Vec<_>>())}))
        .collect()
}
